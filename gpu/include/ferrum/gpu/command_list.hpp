// ferrum/gpu/command_list.hpp — commands recorded for one submission.
//
// Command lists are made on the cold path (`device::create_command_list`) and
// reused: `begin` resets one for a new recording, which is refused while the
// GPU may still run its last submission. Each recording call checks its ranges
// against their arenas and fails with the check's code without recording
// anything, so a list never holds a command that reaches outside its arena.
//
//   list.begin();
//   list.fill(arena.range(0, 256), 0u);
//   list.dispatch(kernel, arena.range(256, 1024), {}, std::array<std::uint32_t, 1>{seed});
//   list.end();
//   queue.submit(std::array{&list}, ++value);
//
// Commands of one list, and lists of successive submissions on one queue, run
// in order, each seeing the memory writes of the ones before it: a barrier
// goes before each command that follows another of the list, and before the
// first one. Each barrier has a scope (ferrum/sync_scope.hpp): the one
// before a command that follows another of the list waits for the union of
// the scopes of every earlier command of the list and blocks the command's
// own (a dispatch: compute-shader, storage reads and writes, sampled reads
// for sampled images; a fill or clear: transfer, transfer writes; a copy,
// stage or image copy: transfer, transfer reads and writes; a native
// recording: every stage and access of the list's kind). The first
// command's is the list's opening: full for list_opening::barrier, none for
// list_opening::by_hazards, exactly the scope given to begin(barrier_scope)
// (its owner derived it from the plan's hazards: a scheduler wave, by the
// barriers the compiler derived, ferrum/binding/barriers.hpp, ordering the
// list's granted ranges against earlier work itself). A command that
// reaches memory outside the list's grants, which no owner sees, gets a
// full barrier before it, as does barrier(). A device clips a scope to the
// stages its queue family has.
//
// A list is made for a kind of queue (compute unless asked otherwise) and is
// submitted to the device's queue of that kind: on a GPU with a transfer queue
// family of its own, its command buffer belongs to that family. A list for
// the transfer queue records fills, copies, host functions and timestamps, no
// dispatch.
//
// Thread safety: one thread at a time records a list (any thread; lists are not
// tied to threads); different lists may be recorded concurrently.
#pragma once

#include "ferrum/error.hpp"
#include "ferrum/gpu/arena.hpp"
#include "ferrum/gpu/event.hpp"
#include "ferrum/gpu/image.hpp"
#include "ferrum/gpu/kernel.hpp"
#include "ferrum/gpu/timestamp_pool.hpp"
#include "ferrum/queue_kind.hpp"
#include "ferrum/sync_scope.hpp"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <variant>
#include <vector>

namespace ferrum::gpu {

class device;
class queue;

// A function the null device's worker calls when it reaches the command: the
// caller keeps `context` alive until the submission's value is reached.
struct host_function {
  void (*call)(void* context) noexcept = nullptr;
  void* context = nullptr;
};

// A host_function that calls `f()`; `f` must outlive the submission.
template <class F>
[[nodiscard]] host_function host_call(F& f) noexcept {
  return {[](void* context) noexcept { (*static_cast<F*>(context))(); }, &f};
}

// A list's own command buffer, for commands an engine records natively
// (command_list::record_native): a VkCommandBuffer on Vulkan
// (vulkan_command_buffer, ferrum/gpu/vulkan_device.hpp).
struct native_commands {
  std::uint64_t command_buffer = 0;
};

// A layout change of a range of one image (command_list::transition).
struct layout_change {
  const gpu::image* image = nullptr;
  image_layout from = image_layout::undefined;
  image_layout to = image_layout::undefined;
  image_subresources range;

  layout_change() = default;
  // Of every level and layer of `img` (when given).
  layout_change(const gpu::image* img, image_layout from_layout, image_layout to_layout) noexcept
      : image(img), from(from_layout), to(to_layout) {
    if (img != nullptr) range = image_subresources::whole(img->spec());
  }
  layout_change(const gpu::image* img, image_layout from_layout, image_layout to_layout,
                const image_subresources& subresources) noexcept
      : image(img), from(from_layout), to(to_layout), range(subresources) {}
};

// An image a kernel reaches (a kernel_operand_kind storage_image or
// sampled_image operand), and the layout it is in when the kernel runs:
// general for a storage image, shader-read-only for a sampled one. The
// whole image (`view` null: an image of one level and one layer), or one
// level of one layer of it through `view` (a view of `image` whose range
// is one mip of one layer; the kernel sees that level's extent).
struct image_operand {
  const gpu::image* image = nullptr;
  image_layout layout = image_layout::general;
  const image_view* view = nullptr;
};

// A kernel's operand: an arena range for a buffer operand (empty: none), or
// an image.
using kernel_operand = std::variant<arena_range, image_operand>;

// Which way an image copy goes (command_list::copy with an image).
enum class image_copy : std::uint8_t { into_image, out_of_image };

// The pipeline stages a list's commands use: `compute` (ferrum's commands,
// and native ones that dispatch or copy), or `graphics` too (native ones
// that draw: a raster node's, inside dynamic rendering), which its barriers
// then cover, before and after. The lists of a plan with raster nodes are
// graphics lists (the scheduler makes them so). Only the compute queue of
// a device with graphics makes them (device::create_command_list).
enum class list_stages : std::uint8_t { compute, graphics };

// How a recording orders its first command against the commands before it
// on the queue (earlier lists of the submission, earlier submissions):
// `barrier`, after all of them; `by_hazards`, after them only when the
// command reaches an unguarded arena or reads a guarded one outside the
// list's grants (what the owner's hazards cannot know about).
enum class list_opening : std::uint8_t { barrier, by_hazards };

// An event command (command_list::set_event, wait_event, reset_event).
enum class event_op : std::uint8_t { set, wait, reset };

class command_list {
 public:
  command_list(const command_list&) = delete;
  command_list& operator=(const command_list&) = delete;
  // The owner destroys a list only once its last submission's value is
  // reached (the device reads it until then).
  virtual ~command_list() = default;

  // Starts a new recording, discarding the previous one; `opening` says how
  // its first command is ordered (list_opening). Errors:
  // command_list_in_flight (its last submission's value is not reached yet),
  // device_lost.
  [[nodiscard]] result<void> begin(list_opening opening = list_opening::barrier);
  // Starts a new recording whose first command is ordered by a barrier of
  // `opening`'s scope alone (ferrum/sync_scope.hpp): the earlier commands of
  // its stages in `opening.before` complete, their writes made visible to
  // the accesses of `opening.after`, before this list's commands of those
  // stages run; it carries the layout changes recorded before the first
  // command. An empty scope: as list_opening::by_hazards. Errors: as begin.
  [[nodiscard]] result<void> begin(const barrier_scope& opening);

  // Runs `k` over `primary` (and `secondary`, when not an empty range) with
  // `push` as the kernel's own push-constant words: each operand of the
  // kind the kernel declares (ferrum/gpu/kernel.hpp), a buffer secondary
  // empty only beside a buffer primary. Errors: foreign_object,
  // range_out_of_bounds, misaligned_range, push_constants_too_large,
  // command_list_state, unsupported_command (a list made for the transfer
  // queue), kernel_operand_mismatch (an operand of another kind than the
  // kernel's), invalid_image (an image operand without a view of more than
  // one level or layer, a view of another image or of more than one level
  // or layer, an image without the usage its kind needs — storage or
  // sampled — or named in another layout than its kind's),
  // buffer_usage_missing (a buffer operand's arena without storage usage:
  // an engine's buffer).
  [[nodiscard]] result<void> dispatch(const kernel& k, const kernel_operand& primary, const kernel_operand& secondary,
                                      std::span<const std::uint32_t> push);
  // A buffer kernel's dispatch, its ranges given as such (`{arena, offset,
  // size}`, `{}` for none).
  [[nodiscard]] result<void> dispatch(const kernel& k, arena_range primary, arena_range secondary,
                                      std::span<const std::uint32_t> push) {
    return dispatch(k, kernel_operand{primary}, kernel_operand{secondary}, push);
  }

  // Writes `value` into every 32-bit word of `target`. Errors: as dispatch
  // (buffer_usage_missing: an arena without transfer-dst usage).
  [[nodiscard]] result<void> fill(arena_range target, std::uint32_t value);

  // Copies `source` into `destination` (same size, not overlapping). Errors: as
  // dispatch (buffer_usage_missing: a source without transfer-src usage, a
  // destination without transfer-dst), copy_size_mismatch, overlapping_copy.
  [[nodiscard]] result<void> copy(arena_range source, arena_range destination);

  // Changes the layout of `range` of `img` (every level and layer for the
  // three-argument form) from `from` (undefined: its contents are
  // discarded, as for an image's first use, or one whose memory another
  // image used) to `to`, in the barrier before the list's next command (the
  // one that command opens with, or one of its own; every transition
  // recorded before a command goes into that one barrier, but for one that
  // changes a subresource a transition pending there changes too: the
  // pending ones then go into a barrier of their own first), or at end()
  // when no command follows. The caller knows the layout each subresource of the
  // range is in (the null device counts a `from` that one is not:
  // null_device::image_layout_errors). Errors: command_list_state,
  // foreign_object, invalid_image (`to` undefined, a layout the image's
  // usage does not allow: usage_allows, or a range that does not fit the
  // image: fits).
  [[nodiscard]] result<void> transition(const image& img, image_layout from, image_layout to);
  [[nodiscard]] result<void> transition(const image& img, image_layout from, image_layout to,
                                        const image_subresources& range);

  // Sets every texel of every level and layer of `img` to zero (depth 0 and
  // stencil 0 for a depth format), the image in `layout` (transfer-dst or
  // general). Ordered as any command. Errors: command_list_state,
  // foreign_object, invalid_image (another layout, an image without
  // transfer-dst usage, a block-compressed format, which no device clears),
  // unsupported_command (a depth format on a list without graphics stages:
  // Vulkan clears depth on a graphics queue only).
  [[nodiscard]] result<void> clear(const image& img, image_layout layout);

  // Copies `source` into `destination`, or `source` (an image) into
  // `destination` (a range): level 0 of every layer, rows tightly packed
  // (rows of 4x4 blocks for a block-compressed format), copy_bytes(spec)
  // bytes; the image is in `layout` when the copy runs (transfer-dst or
  // general into it, transfer-src or general out of it), with the usage the
  // copy needs. Ordered as any command. Errors: command_list_state,
  // foreign_object, range_out_of_bounds, misaligned_range (also a range not
  // at a multiple of 4 and of the format's block_bytes), range_not_granted,
  // copy_size_mismatch, invalid_image (a layout or usage the copy cannot
  // take, or a depth-stencil format: a copy moves one aspect, which ferrum
  // does not do), buffer_usage_missing (the range's arena without
  // transfer-src, or transfer-dst, usage).
  [[nodiscard]] result<void> copy(arena_range source, const image& destination, image_layout layout);
  [[nodiscard]] result<void> copy(const image& source, image_layout layout, arena_range destination);
  // What copy(source, destination, layout) would refuse, recording nothing:
  // to check a copy before the transitions around it.
  [[nodiscard]] result<void> check_copy(arena_range source, const image& destination, image_layout layout) const {
    return image_copy_checks(destination, layout, source, image_copy::into_image);
  }

  // Copies a staged arena (arena.hpp) between its host bytes and the memory
  // commands use: an upload arena's host bytes to the GPU's, a readback
  // arena's GPU memory to its host bytes; the whole arena, ordered like any
  // command. Errors: command_list_state, foreign_object, not_staged (an
  // arena that is not staged), range_not_granted (a guarded arena the list
  // holds no grant covering whole).
  [[nodiscard]] result<void> stage(const arena& a);

  // Records a barrier now: every command before it in submission order
  // completes, and its writes are seen, before any command after it (the
  // next command of the list needs none of its own). Counted in barriers().
  // Errors: command_list_state.
  [[nodiscard]] result<void> barrier();

  // A split barrier (ferrum/gpu/event.hpp). set_event signals `e` once
  // every command before it in submission order of a stage in
  // `scope.before` completed, its writes among `scope.before.accesses`
  // made available; wait_event holds every later command of a stage in
  // `scope.after` until `e` is signaled, those writes visible to the
  // accesses of `scope.after`; the commands between the two are not held.
  // A set and the waits for it give the same scope. reset_event unsignals
  // `e` after every earlier command (a barrier() before it orders the
  // waits). None is a command of size() or a barrier of barriers(); each
  // is counted in events(). Errors: command_list_state, foreign_object (an
  // event of another device), unsupported_command (a list for a transfer
  // queue of its own: Vulkan sets events on graphics and compute queues).
  [[nodiscard]] result<void> set_event(const event& e, const barrier_scope& scope);
  [[nodiscard]] result<void> wait_event(const event& e, const barrier_scope& scope);
  [[nodiscard]] result<void> reset_event(const event& e);

  // Calls `function` on the device's timeline thread, in order with the other
  // commands. Only the null device runs host functions (unsupported_command on
  // others): tests and the checking encoders of `ferrum run` use it.
  [[nodiscard]] result<void> host(host_function function);

  // Writes the GPU's clock into `slot` of `pool` once every command before
  // it in submission order (this list's, earlier lists' and earlier
  // submissions') has completed; read it back once the submission's value is
  // reached (timestamp_pool::read). Not counted in size(): it is a
  // measurement, not work. Errors: command_list_state, foreign_object,
  // range_out_of_bounds (no such slot), timestamps_unsupported (a list for
  // a Vulkan transfer queue whose family has neither graphics nor compute,
  // or writes no timestamps). Timestamps of every queue share the device's
  // clock.
  [[nodiscard]] result<void> timestamp(const timestamp_pool& pool, std::uint32_t slot);

  // Hands the caller the list's command buffer to record commands of its
  // own into, now, as one command of the list: ordered as any command is
  // (after the barrier the list opens with, or one before it when another
  // command precedes), and every later command of the list is ordered after
  // it. The caller's commands must reach only memory the list may write
  // (its grants, for a guarded arena) with compute or transfer stages (and
  // graphics ones, drawing inside dynamic rendering begun and ended there,
  // on a list of list_stages::graphics), must not submit, and must leave no
  // render pass, rendering, query or debug label open;
  // they may bind pipelines and descriptor sets of their own (ferrum's
  // commands bind theirs again). Errors: command_list_state,
  // native_unavailable (the null device records no native commands).
  [[nodiscard]] result<native_commands> record_native();

  // Ends the recording; the list can then be submitted. Errors:
  // command_list_state, or the device's error closing the recording.
  [[nodiscard]] result<void> end();

  // The ranges of guarded arenas this list's commands may write (arena.hpp;
  // fill targets, copy destinations, a kernel's ranges); a copy may read
  // anywhere in a guarded arena the list has a grant in. Anything else of a
  // guarded arena is refused with range_not_granted and records nothing.
  // Ranges of unguarded arenas are not restricted. `ranges` is not copied:
  // it must outlive the recordings (a scheduler lane keeps its nodes'
  // ranges). Grants survive begin().
  void grant(std::span<const arena_range> ranges) noexcept { granted_ = ranges; }

  // Commands recorded since begin().
  [[nodiscard]] std::size_t size() const noexcept { return commands_; }
  // Barriers recorded since begin(), on every device alike.
  [[nodiscard]] std::size_t barriers() const noexcept { return barriers_; }
  // Event sets, waits and resets recorded since begin().
  [[nodiscard]] std::size_t events() const noexcept { return events_; }
  // The scope of the last barrier recorded since begin() (empty when none
  // was, or when it held layout changes alone), as given to the device:
  // barrier_scope::full() for a full one, before the device clips it.
  [[nodiscard]] const barrier_scope& last_barrier() const noexcept { return last_barrier_; }
  // Whether the list is ended and can be submitted (again, once its last
  // submission's value is reached: a recorded list can be replayed).
  [[nodiscard]] bool executable() const noexcept;
  // The timeline value its last submission signals (0: never submitted).
  [[nodiscard]] std::uint64_t submitted_value() const noexcept { return submitted_value_; }
  // The queue of its last submission (nullptr: never submitted), whose
  // timeline submitted_value() is on.
  [[nodiscard]] const gpu::queue* submitted_queue() const noexcept { return submitted_on_; }
  // The kind of queue it was made for.
  [[nodiscard]] queue_kind kind() const noexcept { return kind_; }
  // The stages its commands use.
  [[nodiscard]] list_stages stages() const noexcept { return stages_; }
  [[nodiscard]] const gpu::device& device() const noexcept { return *device_; }

 protected:
  explicit command_list(const gpu::device& owner, queue_kind kind = queue_kind::compute,
                        list_stages stages = list_stages::compute) noexcept
      : device_(&owner), kind_(kind), stages_(stages) {}

  // Device parts, called after the checks above passed.
  virtual result<void> do_begin() = 0;
  virtual result<void> do_dispatch(const kernel& k, const kernel_operand& primary, const kernel_operand& secondary,
                                   std::span<const std::uint32_t> push) = 0;
  virtual result<void> do_fill(arena_range target, std::uint32_t value) = 0;
  virtual result<void> do_copy(arena_range source, arena_range destination) = 0;
  // The staging copy of `a`, a staged arena of this device, in the
  // direction of its class.
  virtual result<void> do_stage(const arena& a) = 0;
  // A copy between `bytes` and the whole of `img` (level 0, every layer),
  // which is in `layout`, the way `direction` says.
  virtual result<void> do_image_copy(const image& img, image_layout layout, arena_range bytes,
                                     image_copy direction) = 0;
  virtual result<void> do_clear(const image& img, image_layout layout) = 0;
  virtual result<void> do_host(host_function function) = 0;
  virtual result<void> do_timestamp(const timestamp_pool& pool, std::uint32_t slot) = 0;
  virtual result<void> do_end() = 0;
  // The command buffer, past the checks and the ordering above.
  virtual result<native_commands> do_native() = 0;
  // Records a barrier of `scope` (ferrum/sync_scope.hpp): every command
  // before it in submission order whose stages are in `scope.before`
  // completes, its writes among `scope.before.accesses` made visible to the
  // accesses of `scope.after`, before any command after it runs its stages
  // in `scope.after`; and `changes` (possibly none) are made in it, each
  // ordered by its layouts' own stages and accesses besides `scope`. A
  // device clips the scope to the stages its queue family has
  // (barrier_scope::full() is every stage it has); an empty scope orders
  // the changes alone.
  virtual void do_barrier(const barrier_scope& scope, std::span<const layout_change> changes) noexcept = 0;
  // The event commands (set_event, wait_event, reset_event), `e` this
  // device's; a device clips `scope` as a barrier's.
  virtual void do_event(event_op op, const event& e, const barrier_scope& scope) noexcept = 0;

 private:
  friend class queue;
  // queued: being checked by queue::submit, which detects a list given twice.
  enum class state { initial, recording, executable, queued, submitted };

  [[nodiscard]] result<void> check_recording(const char* command) const;
  [[nodiscard]] result<void> record_event(const char* command, event_op op, const event& e, const barrier_scope& scope);
  enum class access : std::uint8_t { read, write };
  // `usage`: the buffer_usage bits the command needs of the range's arena.
  [[nodiscard]] result<void> check_range(const char* command, const char* role, arena_range range, access mode,
                                         std::uint32_t usage) const;
  // Whether `range` of a guarded arena may be reached: written only inside a
  // granted range; read anywhere in an arena the list has a grant in (its
  // own lane, whose earlier nodes' output a later node may read).
  [[nodiscard]] bool granted(arena_range range, access mode) const noexcept;
  [[nodiscard]] result<void> recorded(result<void> r);
  // Before a command of `scope` over `ranges`: a barrier of every earlier
  // command of the list's scope before `scope` when one came before it,
  // else of the list's opening scope; a full one when a range lies outside
  // the grants. None when that is empty and no layout change is pending.
  void order(const sync_scope& scope, std::initializer_list<arena_range> ranges) noexcept;
  // Records a barrier of `scope` now, with the pending layout changes.
  void record_barrier(const barrier_scope& scope) noexcept;
  // Every stage the list may run and every access made in them: a native
  // recording's scope.
  [[nodiscard]] sync_scope native_scope() const noexcept;
  // Whether `operand` (the kernel's secondary or its primary) is one `k` takes.
  [[nodiscard]] result<void> check_operand(const kernel& k, bool secondary, const kernel_operand& operand) const;
  [[nodiscard]] result<void> image_copy_checks(const image& img, image_layout layout, arena_range bytes,
                                               image_copy direction) const;

  // Whether the last submission's value is reached (true when never submitted).
  [[nodiscard]] bool last_submission_reached() const noexcept;

  const gpu::device* device_;
  queue_kind kind_;
  list_stages stages_;
  state state_ = state::initial;
  std::size_t commands_ = 0;
  std::size_t barriers_ = 0;
  std::size_t events_ = 0;
  // A command of the list came before and no barrier() since: the next
  // command's barrier orders it after recorded_.
  bool barrier_due_ = false;
  // The union of the scopes of the commands recorded since begin().
  sync_scope recorded_;
  // The scope the first command's barrier has (empty: none; full for
  // list_opening::barrier), until a command or barrier() takes it.
  barrier_scope opening_;
  barrier_scope last_barrier_;
  std::uint64_t submitted_value_ = 0;
  const gpu::queue* submitted_on_ = nullptr;
  std::uint64_t previous_value_ = 0;  // restored when a submission fails
  const gpu::queue* previous_on_ = nullptr;
  std::span<const arena_range> granted_;
  // Transitions for the next barrier (capacity kept across begin()).
  std::vector<layout_change> pending_;
};

}  // namespace ferrum::gpu
