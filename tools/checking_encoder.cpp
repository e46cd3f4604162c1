#include "checking_encoder.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

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

result<std::unique_ptr<wave_checks>> wave_checks::create(gpu::device& device, const plan& p, const scheduler& s,
                                                         fence_stamps* stamps, checks_self_test test) {
  std::unique_ptr<wave_checks> checks(new wave_checks());
  const compiled_program& program = s.program();
  checks->nodes_ = program.node_count;
  checks->lanes_ = program.lanes;
  checks->stamps_ = stamps;
  for (const plan_node& node : p.nodes) checks->max_listed_ = std::max(checks->max_listed_, node.resources.size());

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
  for (const std::unique_ptr<lane_pool>& pool : pools) checks->buckets_.push_back(plan_checks(p, program, *pool, test));
  return checks;
}

wave_checks::bucket_checks wave_checks::plan_checks(const plan& p, const compiled_program& program,
                                                    const lane_pool& pool, checks_self_test test) {
  const compiled_bucket& bucket = pool.bucket();
  bucket_checks b{&bucket.id, {}, {0}, std::vector<const gpu::arena*>(program.lanes, nullptr)};
  // Every resource's compiled place in a lane (offset, size), by id, computed
  // here from the program, independently of what the lane pool resolved for
  // its encoders.
  std::unordered_map<std::string_view, std::array<std::size_t, 2>> place;
  for (std::size_t d = 0; d < bucket.capacity_layouts.size(); ++d)
    for (const projection& at : bucket.capacity_layouts[d].projections)
      place[at.resource.view()] = {static_cast<std::size_t>(bucket.pool_offsets[d] + at.offset),
                                   static_cast<std::size_t>(at.capacity)};
  // Each resource's last user in a wave (node, position).
  std::unordered_map<std::string_view, std::array<std::size_t, 2>> last_user;
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (std::size_t position = 0; position < p.nodes[n].resources.size(); ++position)
      last_user[p.nodes[n].resources[position].view()] = {n, position};
  std::unordered_set<std::string_view> persistent;
  for (const resource_descriptor& r : p.resources)
    if (r.lifetime == allocation_lifetime::persistent) persistent.insert(r.id.view());

  // Walking the nodes in order: each resource's previous user.
  std::unordered_map<std::string_view, std::array<std::size_t, 2>> previous_user;
  bool slot_target = test.corrupt_slot_wave != 0;
  bool workspace_target = test.corrupt_workspace_wave != 0;
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    for (std::size_t position = 0; position < p.nodes[n].resources.size(); ++position) {
      const std::string_view id = p.nodes[n].resources[position].view();
      const auto [offset, size] = word_interior(place.at(id)[0], place.at(id)[1]);
      const auto previous = previous_user.find(id);
      const bool first_use = previous == previous_user.end();
      const bool binding = p.nodes[n].binding && p.nodes[n].binding->view() == id;
      const bool used_later = last_user.at(id) != std::array{n, position};
      if (size != 0) {
        std::uint64_t self_test_wave = 0;
        if (binding && std::exchange(slot_target, false)) self_test_wave = test.corrupt_slot_wave;
        if (!binding && used_later && std::exchange(workspace_target, false))
          self_test_wave = test.corrupt_workspace_wave;
        b.resources.push_back({position, offset, size, first_use ? std::nullopt : std::optional(previous->second),
                               first_use && persistent.contains(id) ? std::optional(last_user.at(id)) : std::nullopt,
                               self_test_wave});
      }
      previous_user[id] = {n, position};
    }
    b.begin.push_back(b.resources.size());
  }
  for (const std::unique_ptr<lane>& l : pool.lanes())
    if (l->index < b.lane_arenas.size()) b.lane_arenas[l->index] = l->arena.get();
  return b;
}

std::size_t wave_checks::checked_per_wave(std::size_t bucket_index) const noexcept {
  return bucket_index < buckets_.size() ? buckets_[bucket_index].resources.size() : 0;
}

std::uint32_t wave_checks::seed(std::uint64_t wave, std::size_t node, std::size_t position) const noexcept {
  // Distinct for every (wave, node, position) while
  // wave * nodes * max_listed stays below 2^32.
  return static_cast<std::uint32_t>((wave * nodes_ + node) * max_listed_ + position);
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
  if (c.lane >= bucket.lane_arenas.size() || bucket.lane_arenas[c.lane] == nullptr)
    throw std::runtime_error("wave " + std::to_string(c.wave) + " runs on lane " + std::to_string(c.lane) +
                             ", which its bucket does not have");
  const gpu::arena& lane_arena = *bucket.lane_arenas[c.lane];
  const gpu::arena_range counter = counters_->range((bucket_index * lanes_ + c.lane) * 4, 4);
  const auto check = [&](const checked_resource& r, std::uint32_t expected) {
    const std::array<std::uint32_t, 1> push{expected};
    if (auto done = c.commands.dispatch(*checker_, lane_arena.range(r.offset, r.size), counter, push); !done)
      refused("check_pattern", done.error());
  };

  for (std::size_t at = bucket.begin[c.node_index]; at < bucket.begin[c.node_index + 1]; ++at) {
    const checked_resource& r = bucket.resources[at];
    if (r.position >= c.resources.size())
      throw std::runtime_error("node " + std::to_string(c.node_index) + " was handed " +
                               std::to_string(c.resources.size()) + " resources; the plan lists more");
    // 1. What it must still hold.
    if (r.previous) {
      check(r, seed(c.wave, (*r.previous)[0], (*r.previous)[1]));
    } else if (r.persistent_last && c.lane_previous_wave != 0) {
      check(r, seed(c.lane_previous_wave, (*r.persistent_last)[0], (*r.persistent_last)[1]));
    }
    // 2. The node's pattern, through the range handed out.
    const gpu::arena_range handed = c.resources[r.position].range;
    const auto [offset, size] = word_interior(handed.offset, handed.size);
    if (size != 0) {
      const std::uint64_t wave = c.wave == r.self_test_wave ? c.wave - 1 : c.wave;
      const std::array<std::uint32_t, 1> push{seed(wave, c.node_index, r.position)};
      if (auto done = c.commands.dispatch(*writer_, handed.arena->range(offset, size), {}, push); !done)
        refused("write_pattern", done.error());
    }
    // 3. The pattern, at the compiled offset.
    check(r, seed(c.wave, c.node_index, r.position));
  }

  if (c.node_index + 1 != nodes_) return;
  if (stamps_ != nullptr) {
    if (auto done = c.commands.host(stamps_->arm(c.wave)); !done) refused("host function", done.error());
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
