// examples/async_pipeline/request_encoder.hpp — the GPU work of one request
// and the host's check of its result.
//
// A request's wave has two nodes (pipeline.json), run in node order on the
// GPU: stage 1, `stage/generate`, writes the request's payload (a pattern of
// its seed) into its slot; stage 2, `stage/transform`, copies that payload
// into its own slot, applies `word * scale + offset` there, and copies the
// result out of the lane into the request's region of a results arena. The
// lane goes back to its pool when the wave completes, so the result must
// leave the lane inside the wave; the results arena is the application's own.
//
//   auto gpu = pipeline_gpu::create(device, tickets, max_words).value();
//   request_encoder encode(*gpu, r, ticket);
//   auto [ec, report] = co_await scheduler.async_submit(wave, encode, asio::as_tuple(asio::use_awaitable));
//   if (!ec) wrong = gpu->mismatches(ticket, r);   // the fence was reached
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/wave.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string_view>

// One request: its size class, its payload size and the numbers its result
// depends on.
struct request {
  std::uint64_t number = 0;
  std::string_view size_class;  // "small" or "large": a bucket class of the plan
  std::uint32_t words = 0;      // the payload, in 32-bit words
  std::uint32_t seed = 0;
  std::uint32_t scale = 0;
  std::uint32_t offset = 0;
};

// Request `number`, drawn from `random`: a third of them large (257 to 4096
// words), the rest small (1 to 256 words).
[[nodiscard]] request make_request(std::uint64_t number, std::mt19937& random);

// What every request's encoder shares: the two kernels and the results
// arena, one region per ticket (a ticket is held by one request at a time).
class pipeline_gpu {
 public:
  // Makes the kernels and a results arena of `tickets` regions of
  // `max_words` words. Errors: the device's.
  [[nodiscard]] static ferrum::result<std::unique_ptr<pipeline_gpu>> create(ferrum::gpu::device& device,
                                                                            std::size_t tickets, std::size_t max_words);

  // The first `words` words of ticket `ticket`'s region.
  [[nodiscard]] ferrum::gpu::arena_range result_region(std::size_t ticket, std::uint32_t words) const noexcept;

  // The words of ticket `ticket`'s region that differ from what request `r`
  // must produce. Only once r's wave has completed (its fence was reached).
  [[nodiscard]] std::size_t mismatches(std::size_t ticket, const request& r) const noexcept;

  [[nodiscard]] const ferrum::gpu::kernel& writer() const noexcept { return *writer_; }
  [[nodiscard]] const ferrum::gpu::kernel& affine() const noexcept { return *affine_; }

 private:
  pipeline_gpu() = default;

  std::unique_ptr<ferrum::gpu::kernel> writer_;
  std::unique_ptr<ferrum::gpu::kernel> affine_;
  std::unique_ptr<ferrum::gpu::arena> results_;
  std::size_t region_bytes_ = 0;
};

// The encoder of one request's wave; it must live until the wave completes.
class request_encoder {
 public:
  request_encoder(const pipeline_gpu& gpu, const request& r, std::size_t ticket) noexcept
      : gpu_(&gpu), request_(r), ticket_(ticket) {}

  // Records node `c.node_index`'s stage. Called by the scheduler for each
  // node, for both nodes concurrently. Throws when the device refuses a
  // command (the wave then fails with encoder_failed and the message).
  void operator()(const ferrum::encode_context& c) const;

 private:
  const pipeline_gpu* gpu_;
  request request_;
  std::size_t ticket_;
};
