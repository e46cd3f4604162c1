// examples/fft_convolution/fft_reference.cpp — signals, the kernel's
// spectrum and FFTW's convolution (fft_reference.hpp).
#include "fft_reference.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>
#include <stdexcept>

namespace fft_convolution {
namespace {

// A well-mixed 32-bit hash (lowbias32): signal values from (wave, index)
// without a generator's state, so any thread can make any wave's signals.
std::uint32_t mix(std::uint32_t x) noexcept {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

float signal_value(std::uint64_t wave, std::size_t index) noexcept {
  const std::uint32_t h = mix(static_cast<std::uint32_t>(wave * 0x9e3779b1u) ^ mix(static_cast<std::uint32_t>(index)));
  // 24 bits to [-1, 1).
  return static_cast<float>(h >> 8) / static_cast<float>(1u << 23) - 1.0f;
}

std::vector<double> kernel_of_taps() {
  std::vector<double> taps(kernel_taps);
  double sum = 0;
  for (std::size_t j = 0; j < kernel_taps; ++j) {
    const double d = (static_cast<double>(j) - static_cast<double>(kernel_taps / 2)) / 6.0;
    taps[j] = std::exp(-d * d);
    sum += taps[j];
  }
  for (double& t : taps) t /= sum;
  return taps;
}

// fftwf_malloc'd complex values: FFTW's new-array execute needs arrays
// aligned as the plan's were, which fftwf_malloc guarantees.
struct fftw_buffer {
  explicit fftw_buffer(std::size_t n) : data(fftwf_alloc_complex(n)) {
    if (data == nullptr) throw std::bad_alloc();
  }
  fftw_buffer(const fftw_buffer&) = delete;
  fftw_buffer& operator=(const fftw_buffer&) = delete;
  ~fftw_buffer() { fftwf_free(data); }
  fftwf_complex* data;
};

}  // namespace

struct convolution_reference::fftw_plans {
  fftwf_plan forward = nullptr;
  fftwf_plan inverse = nullptr;
  ~fftw_plans() {
    if (forward != nullptr) fftwf_destroy_plan(forward);
    if (inverse != nullptr) fftwf_destroy_plan(inverse);
  }
};

convolution_reference::convolution_reference(batch_shape shape)
    : shape_(shape), filter_(static_cast<std::size_t>(shape.points) * 2), plans_(std::make_unique<fftw_plans>()) {
  if (shape.points < kernel_taps || shape.batch == 0 || shape.points > (1u << 24))
    throw std::invalid_argument("fft_convolution: a batch needs at least one signal of at least " +
                                std::to_string(kernel_taps) + " points");
  const std::vector<double> taps = kernel_of_taps();
  const auto n = static_cast<double>(shape.points);
  for (std::size_t k = 0; k < shape.points; ++k) {
    std::complex<double> h = 0;
    for (std::size_t j = 0; j < kernel_taps; ++j)
      // j * k mod n keeps the angle small, so the double's error stays ~1e-16.
      h += taps[j] * std::polar(1.0, -2.0 * std::numbers::pi * static_cast<double>((j * k) % shape.points) / n);
    h /= n;
    filter_[2 * k] = static_cast<float>(h.real());
    filter_[2 * k + 1] = static_cast<float>(h.imag());
  }
  // Batched 1-D plans over contiguous signals; FFTW_ESTIMATE leaves the
  // arrays untouched, and the plans are only ever run on other arrays.
  fftw_buffer a(shape.values());
  fftw_buffer b(shape.values());
  int points = static_cast<int>(shape.points);
  const int batch = static_cast<int>(shape.batch);
  plans_->forward = fftwf_plan_many_dft(1, &points, batch, a.data, nullptr, 1, points, b.data, nullptr, 1, points,
                                        FFTW_FORWARD, FFTW_ESTIMATE);
  plans_->inverse = fftwf_plan_many_dft(1, &points, batch, b.data, nullptr, 1, points, a.data, nullptr, 1, points,
                                        FFTW_BACKWARD, FFTW_ESTIMATE);
  if (plans_->forward == nullptr || plans_->inverse == nullptr)
    throw std::runtime_error("fft_convolution: FFTW made no plan");
}

convolution_reference::~convolution_reference() = default;

void convolution_reference::write_signals(std::uint64_t wave, std::span<std::byte> out) const noexcept {
  for (std::size_t i = 0; i < shape_.values() * 2; ++i) {
    const float v = signal_value(wave, i);
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
}

void convolution_reference::write_filter(std::span<std::byte> out) const noexcept {
  std::memcpy(out.data(), filter_.data(), shape_.filter_bytes());
}

double convolution_reference::max_error(std::uint64_t wave, std::span<const std::byte> result) const {
  if (result.size() < shape_.bytes()) throw std::invalid_argument("fft_convolution: a result is too short");
  fftw_buffer x(shape_.values());
  fftw_buffer spectrum(shape_.values());
  write_signals(wave, std::span(reinterpret_cast<std::byte*>(x.data), shape_.bytes()));
  fftwf_execute_dft(plans_->forward, x.data, spectrum.data);
  for (std::size_t i = 0; i < shape_.values(); ++i) {
    const std::size_t k = i % shape_.points;
    const std::complex<float> product = std::complex<float>(spectrum.data[i][0], spectrum.data[i][1]) *
                                        std::complex<float>(filter_[2 * k], filter_[2 * k + 1]);
    spectrum.data[i][0] = product.real();
    spectrum.data[i][1] = product.imag();
  }
  fftwf_execute_dft(plans_->inverse, spectrum.data, x.data);
  double largest = 0;
  for (std::size_t i = 0; i < shape_.values(); ++i)
    for (std::size_t part = 0; part < 2; ++part) {
      float got = 0;
      std::memcpy(&got, result.data() + 8 * i + 4 * part, 4);
      // NaN compares false: count it as an error of infinity.
      const double d = std::fabs(static_cast<double>(got) - static_cast<double>(x.data[i][part]));
      largest = std::isnan(d) ? INFINITY : std::max(largest, d);
    }
  return largest;
}

}  // namespace fft_convolution
