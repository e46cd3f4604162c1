// history_store.cpp — a program's history copies and turn (history_store.hpp).
#include "history_store.hpp"

#include "ferrum/scheduler/lane_image_placement.hpp"

#include <algorithm>

namespace ferrum::detail {
namespace {

// Storage-buffer offsets every device takes (Vulkan's largest
// minStorageBufferOffsetAlignment).
constexpr std::uint64_t buffer_alignment = 256;

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

// The entry of `imports` (resolve_imports' order: the recipe's imported
// buffers, then its imported images) of recipe image `i`, or of recipe
// import `i` (buffer).
wave_import& entry_of(wave_imports& imports, const lane_recipe& recipe, bool image, std::size_t i) {
  if (!image) return imports[i];
  std::size_t at = recipe.imports.size();
  for (std::size_t k = 0; k < i; ++k) at += recipe.images[k].imported ? 1 : 0;
  return imports[at];
}

}  // namespace

bool history_store::take_turn(history_waiter& w) noexcept {
  const std::lock_guard lock(mutex_);
  if (w.ticket == serving_) return true;
  history_waiter** at = &head_;
  while (*at != nullptr && (*at)->ticket < w.ticket) at = &(*at)->next;
  w.next = *at;
  *at = &w;
  return false;
}

result<history_store::copies> history_store::make_copies(const lane_recipe& recipe, gpu::device& device) {
  copies out;
  std::vector<gpu::placed_image> placed;
  std::uint64_t image_bytes = 0;
  std::uint64_t buffer_bytes = 0;
  for (const history_pair& h : recipe.histories) {
    if (!h.image) {
      buffer_bytes = round_up(buffer_bytes, buffer_alignment);
      const std::uint64_t size = recipe.imports[h.current].size;
      for (int copy = 0; copy < 2; ++copy) {
        out.ranges.push_back({nullptr, buffer_bytes, size});
        buffer_bytes = round_up(buffer_bytes + size, buffer_alignment);
      }
      continue;
    }
    // A reset clears a copy: transfer-dst beside what the plan's accesses need.
    gpu::image_spec spec = lane_image_spec(recipe.images[h.current]);
    spec.usage |= lane_image_spec(recipe.images[h.previous]).usage | gpu::image_usage::transfer_dst;
    auto needs = device.image_requirements(spec);
    if (!needs) return needs.error();
    for (int copy = 0; copy < 2; ++copy) {
      image_bytes = round_up(image_bytes, needs->alignment);
      placed.push_back({spec, image_bytes});
      image_bytes += needs->bytes;
    }
  }
  if (!placed.empty()) {
    auto memory = device.create_image_memory(placed, image_bytes);
    if (!memory) return memory.error();
    out.images = std::move(*memory);
  }
  if (buffer_bytes != 0) {
    auto arena = device.create_arena(buffer_bytes, memory_class::device);
    if (!arena) return arena.error();
    out.buffers = std::move(*arena);
    for (gpu::arena_range& r : out.ranges) r.arena = out.buffers.get();
  }
  return out;
}

result<gpu::command_list*> history_store::free_list(gpu::device& device) {
  // A reset list whose last submission is done, or a new one.
  for (const auto& list : resets_)
    if (list->begin()) return list.get();
  auto made = device.create_command_list(
      queue_kind::compute, device.limits().graphics ? gpu::list_stages::graphics : gpu::list_stages::compute);
  if (!made) return made.error();
  if (auto begun = (*made)->begin(); !begun) return begun.error();
  resets_.push_back(std::move(*made));
  return resets_.back().get();
}

result<history_grant> history_store::assign(std::size_t b, const lane_recipe& recipe, gpu::device& device,
                                            wave_imports& imports) {
  std::optional<copies>& made = buckets_[b];
  if (!made) {
    auto fresh = make_copies(recipe, device);
    if (!fresh) return fresh.error();
    made = std::move(*fresh);
  }
  const bool kept = written_wave_ != 0 && written_bucket_ == b;
  writing_ = kept ? 1 - written_ : 0;
  const std::size_t reading = 1 - writing_;
  history_grant grant{kept ? written_wave_ : 0, nullptr};
  if (!kept) {
    auto list = free_list(device);
    if (!list) return list.error();
    grant.reset = *list;
  }
  std::size_t image_pair = 0;
  std::size_t buffer_pair = 0;
  for (const history_pair& h : recipe.histories) {
    wave_import& current = entry_of(imports, recipe, h.image, h.current);
    wave_import& previous = entry_of(imports, recipe, h.image, h.previous);
    if (h.image) {
      const gpu::image& read = made->images->at(2 * image_pair + reading);
      current.image = &made->images->at(2 * image_pair + writing_);
      previous.image = &read;
      ++image_pair;
      if (grant.reset == nullptr) continue;
      // Zeros, in the layout the previous is found in (resolve_imports).
      gpu::command_list& l = *grant.reset;
      if (auto r = l.transition(read, image_layout::undefined, image_layout::transfer_dst); !r) return r.error();
      if (auto r = l.clear(read, image_layout::transfer_dst); !r) return r.error();
      if (previous.layout != image_layout::transfer_dst && previous.layout != image_layout::undefined)
        if (auto r = l.transition(read, image_layout::transfer_dst, previous.layout); !r) return r.error();
      continue;
    }
    current.range = made->ranges[2 * buffer_pair + writing_];
    previous.range = made->ranges[2 * buffer_pair + reading];
    ++buffer_pair;
    if (grant.reset != nullptr)
      if (auto r = grant.reset->fill(previous.range, 0); !r) return r.error();
  }
  if (grant.reset != nullptr) {
    // Everything after it on the queue sees the zeros.
    if (auto r = grant.reset->barrier(); !r) return r.error();
    if (auto r = grant.reset->end(); !r) return r.error();
  }
  return grant;
}

void history_store::settle(std::size_t b, std::uint64_t wave, history_outcome how) noexcept {
  switch (how) {
    case history_outcome::submitted:
      written_ = writing_;
      written_wave_ = wave;
      written_bucket_ = b;
      break;
    case history_outcome::partly_submitted:
      // What either copy holds is not known: the next wave resets.
      written_wave_ = 0;
      break;
    case history_outcome::unsubmitted:
      break;  // both copies as they were
  }
  history_waiter* next = nullptr;
  {
    const std::lock_guard lock(mutex_);
    ++serving_;
    if (head_ != nullptr && head_->ticket == serving_) {
      next = head_;
      head_ = next->next;
    }
  }
  if (next != nullptr) next->granted(next);
}

}  // namespace ferrum::detail
