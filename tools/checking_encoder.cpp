#include "checking_encoder.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <array>
#include <cstring>
#include <string>

namespace ferrum::tools {
namespace {

// The largest 4-byte-aligned part of [offset, offset + size), as
// {offset, size}; size 0 when there is none.
std::array<std::size_t, 2> word_interior(std::size_t offset, std::size_t size) noexcept {
  const std::size_t begin = (offset + 3) / 4 * 4;
  const std::size_t end = (offset + size) / 4 * 4;
  return {begin, end > begin ? end - begin : 0};
}

[[noreturn]] void refused(const char* what, const ferrum::error& e) {
  throw std::runtime_error(std::string(what) + " refused: " + e.what());
}

}  // namespace

result<std::unique_ptr<wave_checks>> wave_checks::create(gpu::device& device, const scheduler& s, fence_stamps* stamps,
                                                         std::uint64_t corrupt_wave) {
  std::unique_ptr<wave_checks> checks(new wave_checks());
  const compiled_program& program = s.program();
  checks->nodes_ = program.node_count;
  checks->lanes_ = program.lanes;
  checks->stamps_ = stamps;
  checks->corrupt_wave_ = corrupt_wave;

  auto writer = device.create_kernel(gpu::builtin::write_pattern());
  if (!writer) return writer.error();
  checks->writer_ = std::move(*writer);
  auto checker = device.create_kernel(gpu::builtin::check_pattern());
  if (!checker) return checker.error();
  checks->checker_ = std::move(*checker);

  const std::span<const std::unique_ptr<lane_pool>> pools = s.pools();
  auto counters = device.create_arena(std::max<std::size_t>(pools.size() * checks->lanes_, 1) * 4);
  if (!counters) return counters.error();
  checks->counters_ = std::move(*counters);

  for (const std::unique_ptr<lane_pool>& pool : pools) {
    const compiled_bucket& bucket = pool->bucket();
    bucket_checks b{&bucket.id, {}, std::vector<const gpu::arena*>(checks->lanes_, nullptr)};
    // A scheduler is only made for programs with a binding layout; a bucket
    // without one has nothing to check.
    if (bucket.binding) {
      for (const binding_slot& slot : bucket.binding->slots()) {
        const auto [offset, size] =
            word_interior(static_cast<std::size_t>(slot.offset), static_cast<std::size_t>(slot.capacity));
        if (size != 0) b.slots.push_back({slot.node_index, offset, size});
      }
    }
    for (const std::unique_ptr<lane>& l : pool->lanes())
      if (l->index < b.lane_arenas.size()) b.lane_arenas[l->index] = l->arena.get();
    checks->buckets_.push_back(std::move(b));
  }
  return checks;
}

const wave_checks::bucket_checks& wave_checks::bucket_of(const encode_context& c, std::size_t& index) const {
  for (index = 0; index < buckets_.size(); ++index)
    if (buckets_[index].id == &c.bucket) return buckets_[index];
  throw std::runtime_error("wave " + std::to_string(c.wave) + " runs in bucket '" + c.bucket.str() +
                           "', which is not one of the scheduler's pools");
}

void wave_checks::record(const encode_context& c) const {
  std::size_t bucket_index = 0;
  const bucket_checks& bucket = bucket_of(c, bucket_index);

  if (c.binding != nullptr) {
    // The node's own slot, as the scheduler handed it out.
    const auto [offset, size] = word_interior(c.slot.offset, c.slot.size);
    if (size != 0) {
      std::uint64_t wave = c.wave;
      if (wave == corrupt_wave_ && !bucket.slots.empty() && bucket.slots.front().node == c.node_index) --wave;
      const std::array<std::uint32_t, 1> seed{pattern_seed(wave, c.node_index, nodes_)};
      if (auto r = c.commands.dispatch(*writer_, c.slot.arena->range(offset, size), {}, seed); !r)
        refused("write_pattern", r.error());
    }
    // Checked at the compiled offset, not at what the scheduler handed out,
    // so a wrong slot handed out shows as violations (or as a refused range).
    if (c.lane >= bucket.lane_arenas.size() || bucket.lane_arenas[c.lane] == nullptr)
      throw std::runtime_error("wave " + std::to_string(c.wave) + " runs on lane " + std::to_string(c.lane) +
                               ", which its bucket does not have");
    const gpu::arena_range counter = counters_->range((bucket_index * lanes_ + c.lane) * 4, 4);
    for (const checked_slot& slot : bucket.slots) {
      if (slot.node != c.node_index) continue;
      const std::array<std::uint32_t, 1> seed{pattern_seed(c.wave, slot.node, nodes_)};
      if (auto r =
              c.commands.dispatch(*checker_, bucket.lane_arenas[c.lane]->range(slot.offset, slot.size), counter, seed);
          !r)
        refused("check_pattern", r.error());
    }
  }

  if (c.node_index + 1 != nodes_) return;
  if (stamps_ != nullptr) {
    if (auto r = c.commands.host(stamps_->arm(c.wave)); !r) refused("host function", r.error());
  }
}

std::uint64_t wave_checks::violations() const noexcept {
  std::uint64_t sum = 0;
  const std::span<const std::byte> bytes = counters_->bytes();
  for (std::size_t at = 0; at + 4 <= bytes.size(); at += 4) {
    std::uint32_t word = 0;
    std::memcpy(&word, bytes.data() + at, 4);
    sum += word;
  }
  return sum;
}

void checking_encoder::arm(std::uint64_t wave, wave_fault fault, boost::asio::cancellation_signal* signal) noexcept {
  wave_ = wave;
  fault_ = fault;
  signal_ = signal;
  threw_.store(false, std::memory_order_relaxed);
  cancelled_.store(false, std::memory_order_relaxed);
}

void checking_encoder::operator()(const encode_context& c) {
  // Faults are decided per wave id: a wave that is not the one armed for
  // would get another wave's fault and seeds.
  if (c.wave != wave_)
    throw std::runtime_error("encoder armed for wave " + std::to_string(wave_) + " called for wave " +
                             std::to_string(c.wave));
  if (c.node_index == fault_.node && !fault_.before_start) {
    if (fault_.kind == wave_fault_kind::encoder) {
      threw_.store(true, std::memory_order_relaxed);
      throw injected_encoder_fault();
    }
    if (fault_.kind == wave_fault_kind::cancel && signal_ != nullptr) {
      // From inside the wave's own encoder: the wave cannot complete before
      // this returns, so the emit cannot meet the completion's clearing of
      // the slot. The node records on; the wave stops at its next step.
      cancelled_.store(true, std::memory_order_relaxed);
      signal_->emit(boost::asio::cancellation_type::terminal);
    }
  }
  checks_->record(c);
}

}  // namespace ferrum::tools
