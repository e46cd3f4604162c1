// null_reorder.cpp — the order a null queue runs a submission's commands in
// under null_device_options::reorder_unordered (null_reorder.hpp).
#include "null/null_reorder.hpp"

#include <algorithm>
#include <bit>

namespace ferrum::gpu::null_detail {
namespace {

// The highest of `levels` over the bits of `mask`.
std::uint32_t highest(const std::array<std::uint32_t, stages::count>& levels, stage_mask mask) noexcept {
  std::uint32_t out = 0;
  for (; mask != 0; mask &= mask - 1) out = std::max(out, levels[static_cast<std::size_t>(std::countr_zero(mask))]);
  return out;
}

void raise(std::array<std::uint32_t, stages::count>& levels, stage_mask mask, std::uint32_t level) noexcept {
  for (; mask != 0; mask &= mask - 1) {
    std::uint32_t& at = levels[static_cast<std::size_t>(std::countr_zero(mask))];
    at = std::max(at, level);
  }
}

// What of memory a command reaches: up to two arena ranges and two image
// ranges, each marked when the command writes it.
struct reach {
  struct buffer {
    arena_range range;
    bool written;
  };
  struct picture {
    const null_image* image;
    image_subresources range;
    bool written;
  };
  std::array<buffer, 2> buffers{};
  std::array<picture, 2> images{};
};

reach reach_of(const command& c) noexcept {
  reach r;
  using op = command::op;
  switch (c.kind) {
    case op::dispatch:
      // A kernel may write its buffers and storage images (in layout general).
      r.buffers = {{{c.first, true}, {c.second, true}}};
      r.images = {{{c.image, c.range, c.from == image_layout::general},
                   {c.second_image, c.second_range, c.to == image_layout::general}}};
      break;
    case op::fill:
    case op::stage:
      r.buffers[0] = {c.first, true};
      break;
    case op::copy:
      r.buffers = {{{c.first, false}, {c.second, true}}};
      break;
    case op::image_copy: {
      const bool into = c.direction == image_copy::into_image;
      r.buffers[0] = {c.first, !into};
      r.images[0] = {c.image, c.range, into};
      break;
    }
    case op::clear:
      r.images[0] = {c.image, c.range, true};
      break;
    default:
      break;
  }
  return r;
}

bool overlap(arena_range a, arena_range b) noexcept {
  return a.arena != nullptr && a.arena == b.arena && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

// Whether `p` writes memory that `c` reaches.
bool writes_into(const reach& p, const reach& c) noexcept {
  for (const auto& w : p.buffers)
    if (w.written)
      for (const auto& r : c.buffers)
        if (overlap(w.range, r.range)) return true;
  for (const auto& w : p.images)
    if (w.written && w.image != nullptr)
      for (const auto& r : c.images)
        if (r.image == w.image && overlaps(w.range, r.range)) return true;
  return false;
}

const char* name_of(command::op kind) noexcept {
  using op = command::op;
  switch (kind) {
    case op::dispatch:
      return "a dispatch";
    case op::fill:
      return "a fill";
    case op::copy:
      return "a copy";
    case op::stage:
      return "a stage";
    case op::image_copy:
      return "an image copy";
    case op::clear:
      return "a clear";
    default:
      return "a command";
  }
}

}  // namespace

void null_reorderer::run_all(std::span<command_list* const> lists) noexcept {
  for (const command_list* list : lists)
    for (const command& c : static_cast<const null_command_list*>(list)->commands()) {
      if (!c.alone()) {
        add(c);
        continue;
      }
      flush();
      c.run();
    }
  flush();
}

const null_reorderer::event_set* null_reorderer::set_of(const null_event* e) const noexcept {
  for (const event_set& s : sets_)
    if (s.event == e) return &s;
  return nullptr;
}

void null_reorderer::report(std::string what) noexcept { report_(report_context_, std::move(what)); }

void null_reorderer::add_event(const command& c) noexcept {
  const barrier_scope& s = c.barrier;
  const event_set* set = set_of(c.event);
  if (c.kind == command::op::set_event) {
    if (set != nullptr || c.event->signaled()) {
      try {
        report("a set_event (" + scope_text(s) + ") of an event already signaled: it orders nothing");
      } catch (...) {
        report(std::string());
      }
    }
    const std::uint32_t level =
        std::max(highest(after_command_, s.before.stages), highest(barrier_level_, s.before.stages));
    const auto position = static_cast<std::uint32_t>(entries_.size());
    try {
      sets_.push_back({c.event, level, entries_.size()});
      entries_.push_back({(std::uint64_t{level} << 32) | (0xffffffffU - position), &c, barriers_.size()});
    } catch (...) {
      c.run();  // out of memory: the wait finds it signaled, at level 0
    }
    return;
  }
  // A wait: a barrier whose first scope ends at the set.
  std::uint32_t level = 0;
  std::size_t first_end = 0;
  if (set != nullptr) {
    level = set->level;
    first_end = set->first_end;
  } else if (!c.event->signaled()) {
    try {
      report("a wait_event (" + scope_text(s) + ") for an event nothing set: the GPU would wait forever");
    } catch (...) {
      report(std::string());
    }
  }
  raise(barrier_level_, s.after.stages, level);
  try {
    barriers_.push_back({s, first_end});
  } catch (...) {
    // Out of memory: the access check misses the wait.
  }
}

void null_reorderer::add(const command& c) noexcept {
  if (c.kind == command::op::set_event || c.kind == command::op::wait_event) return add_event(c);
  if (!c.barrier.empty()) {
    const barrier_scope& b = c.barrier;
    const std::uint32_t level =
        std::max(highest(after_command_, b.before.stages), highest(barrier_level_, b.before.stages));
    raise(barrier_level_, b.after.stages, level);
    try {
      barriers_.push_back({b, entries_.size()});
    } catch (...) {
      // Out of memory: the access check misses the barrier.
    }
  }
  if (c.kind == command::op::barrier) return;  // runs nothing
  const std::uint32_t level = highest(barrier_level_, c.scope.stages);
  raise(after_command_, c.scope.stages, level + 1);
  const auto position = static_cast<std::uint32_t>(entries_.size());
  const std::uint64_t key = (std::uint64_t{level} << 32) | (0xffffffffU - position);
  try {
    entries_.push_back({key, &c, barriers_.size()});
  } catch (...) {
    c.run();  // out of memory: in submission order
  }
}

void null_reorderer::check_accesses() noexcept {
  // Entries are still in submission order here.
  for (std::size_t j = 0; j < entries_.size(); ++j) {
    const command& c = *entries_[j].c;
    const reach to = reach_of(c);
    for (std::size_t i = 0; i < j; ++i) {
      const command& p = *entries_[i].c;
      const access_mask written = p.scope.accesses & accesses::writes;
      if (written == 0 || !writes_into(reach_of(p), to)) continue;
      bool ordered = false;
      bool covered = false;
      const barrier_scope* seen = nullptr;
      for (std::size_t b = entries_[i].barriers_before; b < entries_[j].barriers_before && !covered; ++b) {
        if (i >= barriers_[b].first_end) continue;  // a wait whose set came after p
        const barrier_scope& s = barriers_[b].scope;
        if ((s.before.stages & p.scope.stages) == 0 || (s.after.stages & c.scope.stages) == 0) continue;
        ordered = true;
        seen = &s;
        covered = (written & ~s.before.accesses) == 0 && (c.scope.accesses & ~s.after.accesses) == 0;
      }
      if (!ordered || covered) continue;
      try {
        report(std::string(name_of(p.kind)) + " (" + scope_text(p.scope) + ") before " + name_of(c.kind) + " (" +
               scope_text(c.scope) + ") reaching its writes: the barrier " + scope_text(*seen) +
               " lacks their accesses");
      } catch (...) {
        report(std::string());
      }
    }
  }
}

void null_reorderer::flush() noexcept {
  check_accesses();
  std::sort(entries_.begin(), entries_.end(), [](const entry& a, const entry& b) { return a.key < b.key; });
  for (const entry& e : entries_) e.c->run();
  entries_.clear();
  barriers_.clear();
  sets_.clear();
  after_command_.fill(0);
  barrier_level_.fill(0);
}

}  // namespace ferrum::gpu::null_detail
