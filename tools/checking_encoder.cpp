#include "checking_encoder.hpp"

#include "ferrum/gpu/builtin_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
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

result<std::unique_ptr<wave_checks>> wave_checks::create(gpu::device& device, std::size_t device_index, const plan& p,
                                                         const scheduler& s, fence_clock* completion_times,
                                                         const run_imports* imports, checks_self_test test) {
  std::unique_ptr<wave_checks> checks(new wave_checks());
  checks->device_ = &device;
  const compiled_program& program = *s.program();
  checks->nodes_ = program.node_count;
  checks->lanes_ = program.lanes;
  checks->completion_times_ = completion_times;
  for (const plan_node& node : p.nodes) checks->max_listed_ = std::max(checks->max_listed_, node.resources.size());
  for (std::size_t n = 0; n < program.node_count; ++n) checks->node_queues_.push_back(program.dependencies.queue(n));

  auto writer = device.create_kernel(gpu::builtin::write_pattern());
  if (!writer) return writer.error();
  checks->writer_ = std::move(*writer);
  auto checker = device.create_kernel(gpu::builtin::check_pattern());
  if (!checker) return checker.error();
  checks->checker_ = std::move(*checker);

  const std::span<const std::unique_ptr<lane_pool>> pools = s.pools(device_index);
  auto counters = device.create_arena(std::max<std::size_t>(pools.size() * checks->lanes_, 1) * queue_kind_count * 4);
  if (!counters) return counters.error();
  checks->counters_ = std::move(*counters);

  const std::vector<listing_check> listings = plan_listing_checks(p, program.dependencies);
  for (const listing_check& l : listings)
    if (l.unchecked != listing_check::unchecked_reason::checked) checks->unchecked_.push_back(describe_unchecked(p, l));
  std::size_t transfer_bytes = 0;
  for (const std::unique_ptr<lane_pool>& pool : pools) {
    bucket_checks b = plan_checks(p, listings, *pool, imports, test);
    b.transfer_base = transfer_bytes;
    transfer_bytes += b.transfer_block * checks->lanes_;
    checks->buckets_.push_back(std::move(b));
  }
  if (transfer_bytes != 0) {
    auto transfer = device.create_arena(transfer_bytes);
    if (!transfer) return transfer.error();
    checks->transfer_ = std::move(*transfer);
  }
  return checks;
}

wave_checks::bucket_checks wave_checks::plan_checks(const plan& p, const std::vector<listing_check>& listings,
                                                    const lane_pool& pool, const run_imports* imports,
                                                    checks_self_test test) {
  const compiled_bucket& bucket = pool.bucket();
  bucket_checks b;
  b.id = &bucket.id;
  b.begin.push_back(0);
  b.snapshots.resize(p.nodes.size());
  // Every resource's compiled place in a lane (offset, size), by id, computed
  // here from the program, independently of what the lane pool resolved for
  // its encoders.
  std::unordered_map<std::string_view, std::array<std::size_t, 2>> place;
  for (std::size_t d = 0; d < bucket.capacity_layouts.size(); ++d)
    for (const projection& at : bucket.capacity_layouts[d].projections)
      place[at.resource.view()] = {static_cast<std::size_t>(bucket.pool_offsets[d] + at.offset),
                                   static_cast<std::size_t>(at.capacity)};

  bool slot_target = test.corrupt_slot_wave != 0;
  bool workspace_target = test.corrupt_workspace_wave != 0;
  std::size_t at = 0;
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    for (std::size_t position = 0; position < p.nodes[n].resources.size(); ++position, ++at) {
      const listing_check& l = listings[at];
      const std::string_view id = p.nodes[n].resources[position].view();
      const gpu::arena* imported = imports != nullptr ? imports->find(id) : nullptr;
      const auto [offset, size] = word_interior(imported != nullptr ? 0 : place.at(id)[0], place.at(id)[1]);
      if (size == 0) continue;
      const bool checked = l.unchecked == listing_check::unchecked_reason::checked;
      ++(checked ? b.checked : b.unchecked);
      const bool binding = p.nodes[n].binding && p.nodes[n].binding->view() == id;
      std::uint64_t self_test_wave = 0;
      if (checked && l.writes) {
        if (binding && std::exchange(slot_target, false)) self_test_wave = test.corrupt_slot_wave;
        if (!binding && l.read_later && std::exchange(workspace_target, false))
          self_test_wave = test.corrupt_workspace_wave;
      }
      checked_resource r{position,       offset, size, l.writes, std::nullopt, false,
                         self_test_wave, none,   none, none,     imported};
      if (checked && l.before != listing_check::expectation::nothing &&
          (imported == nullptr || l.before != listing_check::expectation::previous_wave)) {
        r.expected = l.writer;
        r.expected_from_previous_wave = l.before == listing_check::expectation::previous_wave;
      }
      if (p.nodes[n].queue == queue_kind::transfer) {
        // The lane's block: staging where it writes, snapshots where a
        // compute node checks for it.
        if (r.writes) r.staging = std::exchange(b.transfer_block, b.transfer_block + size);
        if (checked && r.expected) {
          r.before_snapshot = std::exchange(b.transfer_block, b.transfer_block + size);
          b.snapshots[l.checker].push_back({r.before_snapshot, size, *r.expected, r.expected_from_previous_wave});
        }
        if (checked && r.writes) {
          r.after_snapshot = std::exchange(b.transfer_block, b.transfer_block + size);
          b.snapshots[l.checker].push_back({r.after_snapshot, size, {n, position}, false});
        }
      }
      b.resources.push_back(r);
    }
    b.begin.push_back(b.resources.size());
  }
  return b;
}

std::size_t wave_checks::checked_per_wave(std::size_t bucket_index) const noexcept {
  return bucket_index < buckets_.size() ? buckets_[bucket_index].checked : 0;
}

std::size_t wave_checks::unchecked_per_wave(std::size_t bucket_index) const noexcept {
  return bucket_index < buckets_.size() ? buckets_[bucket_index].unchecked : 0;
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
  if (c.contents == nullptr || !c.contents->made())
    throw std::runtime_error("wave " + std::to_string(c.wave) + " runs on lane " + std::to_string(c.lane) +
                             ", which its encoders do not see");
  const lane_contents& on = *c.contents;
  for (std::size_t at = bucket.begin[c.node_index]; at < bucket.begin[c.node_index + 1]; ++at)
    if (bucket.resources[at].position >= c.resources.size())
      throw std::runtime_error("node " + std::to_string(c.node_index) + " was handed " +
                               std::to_string(c.resources.size()) + " resources; the plan lists more");

  const queue_kind kind = node_queues_[c.node_index];
  if (kind == queue_kind::transfer) {
    record_transfer(c, bucket, on);
  } else {
    // A counter per queue kind: checks on two queues run at once.
    const gpu::arena_range counter =
        counters_->range(((bucket_index * lanes_ + c.lane) * queue_kind_count + index_of(kind)) * 4, 4);
    const auto check = [&](gpu::arena_range range, std::uint32_t expected) {
      const std::array<std::uint32_t, 1> push{expected};
      if (auto done = c.commands.dispatch(*checker_, range, counter, push); !done)
        refused("check_pattern", done.error());
    };
    // The transfer nodes' snapshots this node checks: it runs after them.
    const std::size_t block = bucket.transfer_base + c.lane * bucket.transfer_block;
    for (const snapshot_check& s : bucket.snapshots[c.node_index]) {
      if (s.from_previous_wave && c.lane_previous_wave == 0) continue;  // the transfer node took none
      check(transfer_->range(block + s.snapshot, s.size),
            seed(s.from_previous_wave ? c.lane_previous_wave : c.wave, s.pattern[0], s.pattern[1]));
    }
    for (std::size_t at = bucket.begin[c.node_index]; at < bucket.begin[c.node_index + 1]; ++at) {
      const checked_resource& r = bucket.resources[at];
      const gpu::arena_range compiled = compiled_range(r, on);
      // 1. What it must still hold.
      if (r.expected && !r.expected_from_previous_wave) {
        check(compiled, seed(c.wave, (*r.expected)[0], (*r.expected)[1]));
      } else if (r.expected && c.lane_previous_wave != 0) {
        check(compiled, seed(c.lane_previous_wave, (*r.expected)[0], (*r.expected)[1]));
      }
      if (!r.writes) continue;
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
      check(compiled, seed(c.wave, c.node_index, r.position));
    }
  }

  if (c.node_index + 1 != nodes_) return;
  if (completion_times_ != nullptr) {
    if (auto done = c.commands.host(completion_times_->arm(c.wave)); !done) refused("host function", done.error());
  }
}

void wave_checks::record_transfer(const encode_context& c, const bucket_checks& bucket, const lane_contents& on) const {
  const std::size_t block = bucket.transfer_base + c.lane * bucket.transfer_block;
  const auto copy = [&](gpu::arena_range from, gpu::arena_range to) {
    if (auto done = c.commands.copy(from, to); !done) refused("copy", done.error());
  };
  for (std::size_t at = bucket.begin[c.node_index]; at < bucket.begin[c.node_index + 1]; ++at) {
    const checked_resource& r = bucket.resources[at];
    const gpu::arena_range compiled = compiled_range(r, on);
    // 1. What it holds now, for its checker (which skips it when this does).
    if (r.before_snapshot != none && (!r.expected_from_previous_wave || c.lane_previous_wave != 0))
      copy(compiled, transfer_->range(block + r.before_snapshot, r.size));
    if (!r.writes) continue;
    // 2. The node's pattern, through the range handed out, from a staging
    // area filled here: the lane is this wave's alone, and its last
    // submission (the previous wave's copies from it) is done.
    const gpu::arena_range handed = c.resources[r.position].range;
    const auto [offset, handed_size] = word_interior(handed.offset, handed.size);
    // A range handed out that is not the compiled size is copied as far as
    // both go: the checks at the compiled offset show the difference.
    const std::size_t size = std::min(handed_size, r.size);
    if (size != 0) {
      const std::uint64_t wave = c.wave == r.self_test_wave ? c.wave - 1 : c.wave;
      const std::uint32_t pattern = seed(wave, c.node_index, r.position);
      std::byte* staging = transfer_->bytes().data() + block + r.staging;
      for (std::size_t word = 0; word < size / 4; ++word) {
        const std::uint32_t value = gpu::builtin::pattern_word(pattern, static_cast<std::uint32_t>(word));
        std::memcpy(staging + 4 * word, &value, 4);
      }
      copy(transfer_->range(block + r.staging, size), handed.arena->range(offset, size));
    }
    // 3. The pattern at the compiled offset, for its checker.
    if (r.after_snapshot != none) copy(compiled, transfer_->range(block + r.after_snapshot, r.size));
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

std::uint64_t violations(const device_checks& checks) noexcept {
  std::uint64_t sum = 0;
  for (const auto& c : checks) sum += c->violations();
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
  for (const auto& checks : *checks_) {
    if (&checks->device() != &c.commands.device()) continue;
    checks->record(c);
    return;
  }
  throw std::runtime_error("wave " + std::to_string(c.wave) + " runs on a device the checks were not made for");
}

}  // namespace ferrum::tools
