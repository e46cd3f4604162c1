// examples/fft_convolution/convolution_encoder.cpp — fft_convolution's
// encoder (convolution_encoder.hpp).
#include "convolution_encoder.hpp"

#include "fft_lane.hpp"

#include "ferrum/gpu/vulkan_device.hpp"
#include "ferrum/scheduler/async_acquire.hpp"

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fft_convolution {
namespace {

const ferrum::node_resource& resource(const ferrum::encode_context& c, std::string_view id) {
  const ferrum::node_resource* r = c.resource(id);
  if (r == nullptr) throw std::logic_error("node " + std::to_string(c.node_index) + " lists no " + std::string(id));
  return *r;
}

const fft_lane& plans(const ferrum::encode_context& c) {
  const fft_lane* lane = c.state_as<fft_lane>();
  if (lane == nullptr)
    throw std::logic_error("lane " + std::to_string(c.lane) +
                           " has no VkFFT plans (scheduler_options::make_lane_state made none)");
  return *lane;
}

VkCommandBuffer native_commands(const ferrum::encode_context& c) {
  // Records the barrier the node's hazards call for, then hands over the
  // node's command buffer.
  return ferrum::gpu::vulkan_command_buffer(c.native().value().command_buffer);
}

}  // namespace

void convolution_checks::record(std::uint64_t, double error) noexcept {
  const std::scoped_lock lock(mutex_);
  ++checked_;
  if (!(error <= tolerance)) ++mismatches_;
  max_error_ = std::max(max_error_, error);
}

std::uint64_t convolution_checks::checked() const noexcept {
  const std::scoped_lock lock(mutex_);
  return checked_;
}

std::uint64_t convolution_checks::mismatches() const noexcept {
  const std::scoped_lock lock(mutex_);
  return mismatches_;
}

double convolution_checks::max_error() const noexcept {
  const std::scoped_lock lock(mutex_);
  return max_error_;
}

void check_output(const convolution_reference& reference, convolution_checks& checks, std::uint64_t wave,
                  std::span<const std::byte> output) {
  checks.record(wave, reference.max_error(wave, output));
}

void read_outputs(const ferrum::scheduler& s,
                  const std::function<void(std::uint32_t lane, std::span<const std::byte> output)>& read) {
  for (const auto& pool : s.pools()) {
    // Every lane of the pool at once: each acquisition takes another.
    std::vector<ferrum::lane_lease> leases;
    for (std::uint32_t i = 0; i < pool->counts().capacity; ++i)
      leases.push_back(ferrum::async_acquire(*pool, boost::asio::use_future).get());
    for (const ferrum::lane_lease& lease : leases)
      if (const ferrum::node_resource* output = lease->find("resource/output"))
        read(lease.index(), output->bytes().value());
  }
}

void convolution_encoder::operator()(const ferrum::encode_context& c) const {
  const batch_shape& shape = reference.shape();
  switch (c.node_index) {
    case forward_node:
      // Host input goes to the upload pool before the wave's submission
      // (through the lane's stage-in copy where it is staged).
      reference.write_signals(c.wave, resource(c, "resource/signal").bytes().value());
      plans(c).forward->record(native_commands(c));
      break;
    case multiply_node: {
      const ferrum::node_resource& filter = resource(c, "resource/filter");
      reference.write_filter(filter.bytes().value());
      const ferrum::gpu::arena_range spectrum = resource(c, "resource/spectrum").range;
      const std::array<std::uint32_t, 1> push{static_cast<std::uint32_t>(shape.points)};
      c.commands
          .dispatch(multiply, {spectrum.arena, spectrum.offset, shape.bytes()},
                    {filter.range.arena, filter.range.offset, shape.filter_bytes()}, push)
          .value();
      break;
    }
    case inverse_node: {
      // The lane's previous wave is done (its fence was reached before the
      // lane came back) and this wave's GPU work is not submitted yet: its
      // result is in resource/output, and stays there while this runs.
      if (checks != nullptr && c.lane_previous_wave != 0)
        check_output(reference, *checks, c.lane_previous_wave, resource(c, "resource/output").bytes().value());
      plans(c).inverse->record(native_commands(c));
      break;
    }
    default:
      throw std::logic_error("fft_convolution: no work for node " + std::to_string(c.node_index));
  }
}

}  // namespace fft_convolution
