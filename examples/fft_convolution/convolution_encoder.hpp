// examples/fft_convolution/convolution_encoder.hpp — the encoder of
// fft_convolution's waves, and the record of every wave's check.
//
//   fft_convolution::convolution_checks checks;
//   fft_convolution::convolution_encoder encode{reference, *multiply, &checks};
//   co_await scheduler.async_submit({"convolution", {1, 1, 1}}, encode, asio::use_awaitable);
//
// Per wave (fft_convolution.json): node/forward writes the wave's signals
// into its upload resource and records VkFFT's forward FFT natively;
// node/multiply writes the kernel's spectrum and dispatches the multiply
// kernel; node/inverse records VkFFT's inverse FFT natively into the
// persistent readback resource/output. The plan's accesses make ferrum put a
// barrier before node/multiply and node/inverse.
//
// Checking every wave's result: resource/output keeps its bytes until the
// lane's next wave runs. A wave that kept its lane for its caller
// (wave_request::readback) would keep the next wave off the lane until the
// check is done; node/inverse's encoder, which holds the lane and runs
// before the lane's next GPU work, checks the output of the lane's previous
// wave (encode_context::lane_previous_wave) instead, and the last wave of
// each lane is checked after every wave completed, through a lease of each
// lane (read_outputs).
#pragma once

#include "fft_reference.hpp"

#include "ferrum/gpu/kernel.hpp"
#include "ferrum/scheduler/scheduler.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>

namespace fft_convolution {

// Node indices in fft_convolution.json (check_plan in main.cpp).
enum node : std::size_t { forward_node = 0, multiply_node = 1, inverse_node = 2 };

// Every wave's check. Thread safety: record and the readers may be called
// from several threads at once.
class convolution_checks {
 public:
  // Wave `wave`'s result differed from FFTW's by at most `error`.
  void record(std::uint64_t wave, double error) noexcept;
  [[nodiscard]] std::uint64_t checked() const noexcept;
  [[nodiscard]] std::uint64_t mismatches() const noexcept;  // above tolerance
  [[nodiscard]] double max_error() const noexcept;

 private:
  mutable std::mutex mutex_;
  std::uint64_t checked_ = 0;
  std::uint64_t mismatches_ = 0;
  double max_error_ = 0;
};

// Checks `output` (a lane's resource/output) as wave `wave`'s result.
void check_output(const convolution_reference& reference, convolution_checks& checks, std::uint64_t wave,
                  std::span<const std::byte> output);

// Once every wave of `s` completed: `read(lane, output)` with each lane's
// resource/output, for every lane of each of its lane pools, each held
// through a lease (async_acquire) while it is read.
void read_outputs(const ferrum::scheduler& s,
                  const std::function<void(std::uint32_t lane, std::span<const std::byte> output)>& read);

// The encoder; what it refers to outlives the waves. With `checks` null it
// checks nothing (bench/fft_convolution.cpp, where 1-2 ms of CPU per wave
// of checking would swamp what is measured). Throws (the wave then fails
// with encoder_failed) when the lane has no VkFFT plans
// (scheduler_options::make_lane_state) or recording fails.
struct convolution_encoder {
  const convolution_reference& reference;
  const ferrum::gpu::kernel& multiply;
  convolution_checks* checks = nullptr;

  void operator()(const ferrum::encode_context& c) const;
};

}  // namespace fft_convolution
