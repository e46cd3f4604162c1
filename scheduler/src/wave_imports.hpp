// wave_imports.hpp (private) — a wave's imported buffers and images
// (wave_request::imports, wave_request::images): checked and resolved
// against the wave's bucket when the wave is accepted, and ordered against
// the scheduler's other waves that use the same ones when it is submitted.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/lane_recipe.hpp"
#include "ferrum/error.hpp"
#include "ferrum/gpu/device.hpp"
#include "ferrum/scheduler/detail/wave_submission.hpp"

#include <boost/container/static_vector.hpp>

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace ferrum::detail {

// One imported resource of a wave: the bytes its nodes get of the engine's
// buffer, or the engine's image and the layout the wave finds it in; and
// whether the wave writes it: a node writes the buffer, or the image — a
// node writes it, presents it, or the wave changes its layout (an image
// only read, handed in the layout its reads need, is not written).
// For an image, its resource (the compiled program's) and the layout the
// wave leaves it in: its last use's (wave_report::final_images).
struct wave_import {
  gpu::arena_range range;
  const gpu::image* image = nullptr;
  image_layout layout = image_layout::undefined;
  bool written = false;
  const resource_id* resource = nullptr;
  image_layout left = image_layout::undefined;  // the layout the wave leaves it in
  // A history resource's (the scheduler's, not the request's): its object
  // is one of its pair's two copies, set when the wave takes its turn
  // (history_store::assign); none until then.
  history_role history = history_role::none;

  // What waves that use it are ordered by: the buffer's arena, or the image.
  [[nodiscard]] const void* object() const noexcept {
    return image != nullptr ? static_cast<const void*>(image) : static_cast<const void*>(range.arena);
  }
  // Its bytes in the object: the buffer's range, an image whole.
  [[nodiscard]] std::size_t first() const noexcept { return image != nullptr ? 0 : range.offset; }
  [[nodiscard]] std::size_t last() const noexcept {
    return image != nullptr ? static_cast<std::size_t>(-1) : range.offset + range.size;
  }
};
using wave_imports = boost::container::static_vector<wave_import, max_wave_imports + max_wave_images>;

// Where a wave's nodes run on its device: per node the kind its device
// queue is named by (submission_plan::node_queues), the program that says
// which nodes are culled (which run nowhere), and per imported resource
// of the bucket the kinds its live nodes run on (queues_using_imports).
struct node_placement {
  std::span<const queue_kind> queues;
  const compiled_program* program = nullptr;
  std::span<const std::uint32_t> used;
};

// Per imported buffer of `recipe` (its `imports`' order), then per image
// of its `images` (their order; 0 for one not imported), the queue kinds
// (queue_bit each) of the live nodes that use it under `nodes`' queues and
// program: made once per program and bucket, what a wave's
// resolve_imports checks the objects it names against.
[[nodiscard]] std::vector<std::uint32_t> queues_using_imports(const lane_recipe& recipe, const node_placement& nodes);

// The request's buffers for `recipe`'s imported buffers (its order), each
// cut to its resource's size, then its images for the recipe's imported
// images (its order); a history resource's entry (the recipe lists them
// among its imported ones) holds no buffer or image yet, which the wave's
// turn gives it (history_store), and the layouts of an image's: the
// current's named undefined (a node writes it first), the previous's the
// layout the current's last use leaves. Errors (naming the entry and the resource):
// invalid_wave_request, import_missing, import_too_small (naming the bytes
// given and the bytes wanted), buffer_usage_missing (a buffer without the
// usage an access of the plan needs: buffer_usage_of, naming the usage and
// the access), invalid_image, foreign_object, range_out_of_bounds
// (wave.hpp, wave_request), import_not_shared (a buffer or image not
// shared with the queue a live node that uses it runs on: arena::queues,
// image::queues, naming the node). `device`: the scheduler's one device,
// or null when it has several; `nodes`: where the nodes run on it.
[[nodiscard]] result<wave_imports> resolve_imports(const copied_imports& buffers, const copied_images& images,
                                                   const lane_recipe& recipe, const bucket_id& bucket,
                                                   const gpu::device* device, const node_placement& nodes);

// Orders the waves of a scheduler that use one buffer or image: a wave
// waits on the GPU for the last earlier wave that wrote bytes of a buffer
// its own range overlaps (or the image), and a wave that writes them also
// for the earlier waves that read them. Waves over disjoint ranges of one
// buffer, and waves that only read the same bytes or image, do not wait for
// each other.
// Values are the compute queue's timeline (a scheduler with imports has one
// device). A wave takes the lock from `after` to `record`, around its
// submission, so that two waves' submissions cannot both miss each other.
class import_order {
 public:
  import_order() { entries_.reserve(4 * (max_wave_imports + max_wave_images)); }

  [[nodiscard]] std::unique_lock<std::mutex> lock() { return std::unique_lock(mutex_); }
  // The value the wave's first submission on each queue waits for (0: none
  // or reached on `timeline`). Under lock().
  [[nodiscard]] std::uint64_t after(std::span<const wave_import> imports, const gpu::timeline& timeline) const noexcept;
  // The wave's submission completes at `value`: what later waves wait for.
  // Entries `timeline` reached go. Under lock().
  void record(std::span<const wave_import> imports, std::uint64_t value, const gpu::timeline& timeline) noexcept;

 private:
  // One range of one buffer (an image whole), as waves used it.
  struct entry {
    const void* object;  // wave_import::object
    std::size_t first;   // wave_import::first, last
    std::size_t last;
    std::uint64_t written;  // the last wave that wrote it
    std::uint64_t read;     // the last wave that read it
  };
  std::mutex mutex_;
  std::vector<entry> entries_;
  // What every wave waits for (a buffer that could not be remembered).
  std::uint64_t floor_ = 0;
};

}  // namespace ferrum::detail
