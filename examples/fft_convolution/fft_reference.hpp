// examples/fft_convolution/fft_reference.hpp — the host side of the
// fft_convolution example: each wave's signals, the fixed kernel and its
// spectrum, and the result FFTW (libfftw3-dev, single precision) computes for
// a wave, against which the GPU's result is checked.
//
//   fft_convolution::convolution_reference ref({.points = 4096, .batch = 16});
//   ref.write_signals(wave, signal_bytes);           // the wave's input
//   ref.write_filter(filter_bytes);                  // the kernel's spectrum, scaled by 1 / points
//   double error = ref.max_error(wave, output_bytes);  // against FFTW's convolution
//
// Values are complex f32, interleaved (real, imaginary); a batch is `batch`
// signals of `points` values each, one after another. The convolution is
// circular: y = IFFT(FFT(x) * FFT(h)) / points, h the kernel zero-padded to
// `points`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace fft_convolution {

struct batch_shape {
  std::uint64_t points = 0;  // a power of two (VkFFT then needs no scratch buffer of its own)
  std::uint64_t batch = 0;

  [[nodiscard]] std::size_t values() const noexcept { return static_cast<std::size_t>(points * batch); }
  [[nodiscard]] std::size_t bytes() const noexcept { return values() * 8; }
  [[nodiscard]] std::size_t filter_bytes() const noexcept { return static_cast<std::size_t>(points) * 8; }
};

// The largest difference allowed between a GPU result and FFTW's, in any
// real or imaginary part. The results are below 1 (signals in [-1, 1), a
// kernel summing to 1); VkFFT's f32 FFTs of 4,096 points there differ from
// FFTW's by about 2e-7 on lavapipe (fft_convolution prints the largest it
// saw), and a GPU's faster sine and cosine may add a few times that.
inline constexpr double tolerance = 1e-5;

// The fixed kernel: a Gaussian blur of 33 taps, summing to 1.
inline constexpr std::size_t kernel_taps = 33;

// Thread safety: every const member may be called from several threads at
// once (FFTW's new-array execute functions are; its plans are made once, by
// the constructor).
class convolution_reference {
 public:
  explicit convolution_reference(batch_shape shape);
  convolution_reference(const convolution_reference&) = delete;
  convolution_reference& operator=(const convolution_reference&) = delete;
  ~convolution_reference();

  [[nodiscard]] const batch_shape& shape() const noexcept { return shape_; }

  // Writes wave `wave`'s signals (a function of the wave's number alone)
  // into the first shape().bytes() bytes of `out`.
  void write_signals(std::uint64_t wave, std::span<std::byte> out) const noexcept;
  // Writes the kernel's spectrum, scaled by 1 / points (the inverse FFT's
  // normalization), into the first shape().filter_bytes() bytes of `out`.
  // Computed directly from the taps in double precision, not with an FFT.
  void write_filter(std::span<std::byte> out) const noexcept;
  // The largest difference between `result` (shape().bytes() bytes) and
  // FFTW's convolution of wave `wave`'s signals with the kernel.
  [[nodiscard]] double max_error(std::uint64_t wave, std::span<const std::byte> result) const;

 private:
  struct fftw_plans;
  batch_shape shape_;
  std::vector<float> filter_;  // the scaled spectrum, interleaved
  std::unique_ptr<fftw_plans> plans_;
};

}  // namespace fft_convolution
