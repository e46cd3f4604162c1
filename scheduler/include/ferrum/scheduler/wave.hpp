// ferrum/scheduler/wave.hpp — what a submission wave is asked to do, what
// its encoders see, and what it reports.
//
//   ferrum::wave_request request{.bucket_class = "step", .extent = {1, 48, 1}};
//   auto encode = [&](const ferrum::encode_context& c) {
//     c.commands.fill(c.slot, 0u).value();   // the node's slot, on its lane
//     if (const ferrum::node_resource* scratch = c.resource("resource/scratch"))
//       c.commands.fill(scratch->range, 0u).value();  // a workspace resource of the node
//   };
//   auto [ec, report] = co_await scheduler.async_submit(request, encode, asio::as_tuple(asio::use_awaitable));
#pragma once

#include "ferrum/binding/execution_binding.hpp"
#include "ferrum/gpu/command_list.hpp"
#include "ferrum/gpu/semaphore.hpp"
#include "ferrum/memory_class.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ferrum {

class lane_contents;
class lane_state;
class wave_readback;

// The most semaphores a wave waits on, and the most it signals
// (wave_request::wait, wave_request::signal).
inline constexpr std::size_t max_wave_semaphores = 4;

// The most imported buffers a wave names (wave_request::imports).
inline constexpr std::size_t max_wave_imports = 8;

// A buffer of the engine's that a wave uses for an imported resource of its
// plan (a resource of a pool whose memory class is `imported`, docs/
// embedding.md, "Imported buffers"): `range` of an arena of the wave's
// device — an engine's VkBuffer through gpu::import_vulkan_buffer, or any
// arena made on the device — of at least the resource's bytes in the wave's
// bucket. The resource's nodes get its first bytes (node_resource::range,
// native_buffer), their lists granted them for writing.
struct imported_buffer {
  std::string_view resource;
  gpu::arena_range range;
};

// The most imported images a wave names (wave_request::images).
inline constexpr std::size_t max_wave_images = 8;

// An image of the engine's that a wave uses for an imported image of its
// plan (an image resource of a pool whose memory class is `imported`,
// docs/embedding.md, "Imported images"): a swapchain's (gpu::swapchain_image::
// image), an engine's VkImage through gpu::import_vulkan_image, or any image
// of the wave's device — of the plan's format, mip levels and layers, the
// resource's extent in the wave's bucket, and at least the usage the plan's
// accesses of it need (ferrum::image_usage_of). `layout`: the layout it is
// in when the wave's first submission starts (undefined: its contents are
// not kept); the image's first transition in the wave starts from it, and
// the wave leaves it in the layout of its last use in the plan (a `present`
// one: present-src).
struct imported_image {
  std::string_view resource;
  const gpu::image* image = nullptr;
  image_layout layout = image_layout::undefined;
};

// A wave's size class: it runs in the smallest bucket of `bucket_class`
// whose capacity covers `extent` in every dimension (the smallest by the
// product of dimensions, ties by bucket id).
//
// The engine's sync (README, "A wave and the engine's semaphores"): the
// wave's first submission waits on `wait` (a swapchain image's acquisition,
// the engine's timeline value for its own work), holding back the commands
// of each wait's stage, and its last submission (its join) signals `signal`
// once every command of the wave completed. Semaphores of the wave's device
// (gpu::device::create_semaphore, gpu::import_vulkan_semaphore), at most
// max_wave_semaphores each. A wave handed semaphores always passes them on:
// one that fails or is cancelled before its submission waits on them and
// signals them in an empty submission instead, so that what the engine waits
// for still comes.
//
// The engine's buffers (`imports`): one for each imported resource of the
// plan, at most max_wave_imports, on a scheduler over one device. Inside the
// wave ferrum orders their uses by the plan's accesses, as it does lane
// memory; between waves, a wave that uses a buffer an earlier wave of the
// scheduler wrote, or writes one an earlier wave used, waits for that wave
// on the GPU (per buffer: the arena). The engine's own work on them is the
// engine's to order, with `wait` and `signal`. A buffer must stay alive, and
// its memory bound, until the wave's submitted value (wave_report) is
// reached on the compute queue's timeline: when a wave that was not
// cancelled after its submission completes, it is. Refused before anything
// runs (the wave completes with the code, its semaphores passed on):
// import_missing (a resource named by none), import_too_small (a range
// smaller than its resource in the bucket), foreign_object (an arena of
// another device), range_out_of_bounds (a range outside its arena),
// invalid_wave_request (more than max_wave_imports, a resource named twice
// or not imported by the plan, no arena, two buffers overlapping in one
// arena where a node writes one, a scheduler over several devices).
//
// The engine's images (`images`): one for each imported image of the plan,
// at most max_wave_images, as the buffers: ordered inside the wave by the
// transitions the compiler derived, between the scheduler's waves as a
// buffer a node writes (each image), and the engine's to keep alive until
// the wave's value is reached. Refused: import_missing (an image named by
// none), invalid_image (one unlike its resource, or a `layout` its usage
// does not allow), foreign_object (an image of another device),
// invalid_wave_request (more than max_wave_images, a resource named twice
// or not an imported image of the plan, no image, one image for two
// resources, a scheduler over several devices).
//
// Reading what the wave wrote (`readback`, ferrum/scheduler/wave_readback.hpp):
// a wave that completes with success moves its lane into `*readback` before
// its completion handler is called, instead of giving it back; the readback
// holds it, read-only, until it is reset or goes. Like the peer socket of
// Asio's async_accept, the object is the caller's, and must stay valid and
// untouched until the handler is called; a wave that fails leaves it as it
// was.
struct wave_request {
  // Must stay valid only until async_submit returns (all of it is copied),
  // but for the object `readback` points to.
  std::string_view bucket_class;
  bucket_capacity extent{1, 1, 1};
  std::span<const gpu::semaphore_op> wait{};
  std::span<const gpu::semaphore_op> signal{};
  std::span<const imported_buffer> imports{};
  std::span<const imported_image> images{};
  wave_readback* readback = nullptr;
};

// One resource a node lists in the plan, on the wave's lane: its bytes in the
// lane's memory (docs/design.md, "Lane memory"). An invocation resource's
// bytes are the node's only during the resource's live interval (the nodes
// from its first to its last user): in an interval pool, bytes it shares with
// a resource of an earlier interval hold that resource's leftovers when its
// interval begins, and the bytes are another resource's once it ends. A
// persistent resource's bytes are never shared, and keep what the lane's
// previous wave left in them (encode_context::lane_previous_wave).
//
// Its pool's memory class (ferrum/memory_class.hpp) says where the bytes
// live: a `device` resource is GPU memory the host never touches, an
// `upload` one is written by the host before the wave's submission, a
// `readback` one is read by the host once the wave's fence is reached, an
// `imported` one is the buffer the wave names for it (wave_request::imports;
// outside a wave — a lane lease, a lane state factory — not to be used: an
// empty range until a wave named one, then the last wave's).
class node_resource {
 public:
  node_resource(const resource_id* resource, allocation_kind k, allocation_lifetime l, memory_class m,
                gpu::arena_range r, std::span<std::byte> host) noexcept
      : id(resource), kind(k), lifetime(l), memory(m), range(r), host_(host) {}

  const resource_id* id;  // the compiled program's
  allocation_kind kind;
  allocation_lifetime lifetime;
  memory_class memory;
  // For GPU commands: the node's command list is granted exactly these
  // ranges of the lane's arena of the resource's class (for writing; it may
  // read the whole lane).
  gpu::arena_range range;

  // For the host: the same bytes, for an upload or readback resource. Host
  // writes are seen by the wave's submission (through the lane's stage-in
  // copy where the upload memory is staged); where the GPU runs earlier
  // nodes over shared bytes (an interval pool), it overwrites them before
  // this node runs, so host input belongs in binding slots and conservative
  // pools. GPU writes to a readback resource are in them once the wave's
  // fence is reached, until the lane's next wave. Errors: no_host_bytes (a
  // device resource: GPU memory the host cannot touch, on any device).
  [[nodiscard]] result<std::span<std::byte>> bytes() const;

 private:
  std::span<std::byte> host_;
};

// An image the node lists in the plan (docs/design.md, "Images"), on the
// wave's lane: the lane's image, the node's access and the layout that
// access needs, which ferrum has put it in when the node's first command
// runs (the transitions the compiler derived, made in the barrier the
// node's list opens with). Commands over it name that layout; a node
// leaves it there. An invocation image's contents are the node's only
// during its live interval, as a resource's bytes are (node_resource): it
// may share memory with images of other intervals, and its first use in a
// wave starts from undefined contents.
//
// For an attachment (a raster node's color or depth image), what the
// node's rendering does with its contents (ferrum/image.hpp), derived from
// the plan (gpu::vulkan_load_op and vulkan_store_op give Vulkan's):
// `load` clear where this is the first use in the wave of an invocation
// image's subresources it reaches and it overwrites them (a
// color-attachment or depth-attachment access: nothing before it in the
// wave wrote them) — the engine's images too (an imported image drawn
// first is cleared, not drawn over what the engine left) — else load (an
// earlier node's write, a persistent image's last wave, an engine's image
// read first, depth-read); `store` dont_care where no later node of the
// wave reaches them and it is an invocation image that is not the
// engine's, else store (the engine keeps its images). For other accesses
// they are load and store.
//
// `range`: the mip levels and layers the access reaches (the plan's
// `mips` and `layers`; every one for a whole-image access), in that layout;
// `view`: a view of exactly them where the access reaches part of the
// image (made with the lane), null for the whole image, whose own view
// serves. A node that reaches several parts of one image has a node_image
// for each (encode_context::image(id, mip, layer) finds one).
struct node_image {
  const resource_id* id;  // the compiled program's
  const gpu::image* image;
  resource_access access;
  image_layout layout;
  attachment_load load = attachment_load::load;
  attachment_store store = attachment_store::store;
  gpu::image_subresources range{};
  const gpu::image_view* view = nullptr;

  // What a kernel takes for it (command_list::dispatch): the image, or one
  // level of one layer of it through the view.
  [[nodiscard]] gpu::image_operand operand() const noexcept { return {image, layout, view}; }
  // Its view's native handle (a VkImageView on Vulkan): of the part, or of
  // the whole image.
  [[nodiscard]] std::uint64_t native_view() const noexcept {
    return view != nullptr ? view->native_handle() : image->native_view();
  }
};

// A range of a lane as native commands reach it: its arena's buffer (a
// VkBuffer on Vulkan: gpu::vulkan_buffer), the range's offset and size in
// that buffer, and the device address of its first byte (0 where the
// device has no buffer device addresses). All 0 for an empty range.
struct native_buffer {
  std::uint64_t buffer = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t device_address = 0;

  [[nodiscard]] static native_buffer of(gpu::arena_range r) noexcept {
    if (r.arena == nullptr) return {};
    const std::uint64_t base = r.arena->device_address();
    return {r.arena->native_handle(), r.offset, r.size, base != 0 ? base + r.offset : 0};
  }
};

// A node's native recording (encode_context::native): the command buffer of
// the node's list (a VkCommandBuffer on Vulkan: gpu::vulkan_command_buffer),
// and each resource the node lists, and its slot, as native buffers.
struct native_scope {
  gpu::native_commands command_buffer;
  std::span<const node_resource> resources;
  gpu::arena_range slot_range;
  // The node's images (encode_context::images): a VkImage and VkImageView
  // each on Vulkan (gpu::vulkan_image, gpu::vulkan_image_view), in the
  // layout node_image::layout says.
  std::span<const node_image> images;

  // The node's i-th resource (encode_context::resources[i]).
  [[nodiscard]] native_buffer resource(std::size_t i) const noexcept { return native_buffer::of(resources[i].range); }
  // The node's binding slot (empty when it has none).
  [[nodiscard]] native_buffer slot() const noexcept { return native_buffer::of(slot_range); }
};

// What an encoder gets for one node of one wave.
struct encode_context {
  std::size_t node_index;
  // The node's binding: its slot's bytes on the wave's lane, and nothing
  // else; null for a node that owns no binding resource.
  const node_binding* binding;
  // The same slot as a range of the lane's arena, for GPU commands (empty
  // when the node has no slot).
  gpu::arena_range slot;
  // The node's command list on this lane, begun; the scheduler ends and
  // submits it. Recording into it is how an encoder puts GPU work into the
  // wave.
  gpu::command_list& commands;
  std::uint64_t wave;
  const bucket_id& bucket;
  std::uint32_t lane;
  // With scheduler_options::replay: `commands` still holds what this node's
  // encoder recorded in an earlier wave on this lane, and is submitted again
  // as it is. The encoder records nothing (recording fails with
  // command_list_state) and only writes the node's binding bytes, which sit
  // where they sat then. False: record the node's commands afresh.
  bool replay = false;
  // Set once the wave is cancelled (terminal or partial): the remaining
  // nodes are skipped and nothing is submitted, so an encoder that suspends
  // (a coroutine) may stop early. Read it through cancelled().
  const std::atomic<bool>* cancel = nullptr;

  // Every resource the node lists, in the plan's order (`resources[i]` is
  // the node's i-th), its binding slot included; resolved when the lane was
  // made.
  std::span<const node_resource> resources;
  // The id of the last wave whose submission ran on this lane (0: none yet):
  // the wave whose output the lane's persistent resources hold. Lanes take
  // turns, so with L lanes this is usually wave - L, not wave - 1.
  std::uint64_t lane_previous_wave = 0;
  // The lane's engine state (ferrum/scheduler/lane_state.hpp): what
  // scheduler_options::make_lane_state made for this lane; null without a
  // factory, or where it made none. Every node of the wave sees the same.
  lane_state* state = nullptr;
  // The images the node lists, in the plan's order (a node's resources
  // that are images have an empty range in `resources`).
  std::span<const node_image> images{};
  // The wave's lane, read-only (its arenas, lists and state const): every
  // node's resources and slot, and lane offsets as ranges
  // (lane_contents::range). What other nodes of the wave write is theirs.
  const lane_contents* contents = nullptr;
  // For a plan with history resources (docs/design.md, "History"): the
  // wave whose output their previous copies hold — the last wave before
  // this one, on this bucket, that submitted whole — or 0 where ferrum
  // reset them to zeros instead (the bucket's first wave, the first after a
  // wave of another bucket or after one submitted in part), when a node
  // that blends with history (TAA) uses the current frame alone. 0 without
  // history too.
  std::uint64_t history_wave = 0;

  // The lane's state as the engine's type T (derived from lane_state):
  // nullptr when the lane has none or it is of another type.
  template <class T>
  [[nodiscard]] T* state_as() const noexcept {
    return dynamic_cast<T*>(state);
  }

  [[nodiscard]] bool cancelled() const noexcept { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }

  // The node's native recording scope: its list's command buffer, for the
  // engine's own commands (its pipelines, descriptor sets, a third-party
  // library's dispatches), and the node's resources as native buffers.
  // Before it returns, the list has recorded the barrier the node's derived
  // hazards call for (the one it opens with, or one after an earlier
  // command of the node); every ferrum command the node records after it is
  // ordered after the native commands. The contract: the native commands
  // touch only the node's declared resources, with the accesses the plan
  // declares for them (a v2 plan's `access`), using compute or transfer
  // stages — and, for a raster node (one with attachment accesses), the
  // graphics pipeline's: its draws inside dynamic rendering over its
  // attachment images, begun and ended in the native commands, with the
  // load and store ops node_image says (the lists of a plan that draws
  // are list_stages::graphics, so the barriers cover them); they never
  // submit; they leave no render pass, rendering, query or debug label
  // open. The validation layers with synchronization validation check
  // it on lavapipe in the tests. Each call is one command of the list:
  // record the native commands right after it, before the node's next
  // ferrum command.
  // Errors: native_unavailable (the null device), command_list_state (a
  // replaying wave records nothing).
  [[nodiscard]] result<native_scope> native() const {
    auto native_commands = commands.record_native();
    if (!native_commands) return native_commands.error();
    return native_scope{*native_commands, resources, slot, images};
  }

  // The node's image `id` (its first part, where it reaches several);
  // nullptr when the node does not list it as an image.
  [[nodiscard]] const node_image* image(std::string_view id) const noexcept {
    for (const node_image& i : images)
      if (i.id->view() == id) return &i;
    return nullptr;
  }
  // The node's part of image `id` that holds level `mip` of layer `layer`;
  // nullptr when it reaches none such.
  [[nodiscard]] const node_image* image(std::string_view id, std::uint32_t mip,
                                        std::uint32_t layer = 0) const noexcept {
    for (const node_image& i : images)
      if (i.id->view() == id && gpu::overlaps(i.range, {mip, 1, layer, 1})) return &i;
    return nullptr;
  }

  // The node's resource `id`; nullptr when the node does not list it.
  // Linear in the node's resources; compares strings, allocates nothing.
  [[nodiscard]] const node_resource* resource(std::string_view id) const noexcept {
    for (const node_resource& r : resources)
      if (r.id->view() == id) return &r;
    return nullptr;
  }
};

// An encoder is a callable `void(const encode_context&)` or a coroutine
// `asio::awaitable<void>(const encode_context&)`, called once per node of
// every wave on the scheduler's executor, for different nodes of a wave
// concurrently (a coroutine encoder may suspend; the wave's fan-in waits for
// it). It may throw: the wave then fails with encoder_failed, naming the node
// and the exception's message, and submits nothing.

// The phases of a wave, in order; the report holds when each ended. `bind`
// ends once every node has its encode context, made from the lane: its
// binding, slot, resources and command list.
enum class wave_phase : std::uint8_t { acquire, bind, encode, submit, fence, release };
inline constexpr std::size_t wave_phase_count = 6;
[[nodiscard]] std::string_view to_string(wave_phase phase) noexcept;

// When something ran on the GPU, on steady_clock.
struct gpu_interval {
  std::chrono::steady_clock::time_point begin;
  std::chrono::steady_clock::time_point end;
};

struct wave_report {
  // The wave's id in its scheduler, from 1.
  std::uint64_t wave = 0;
  // The program it ran on (its plan's hash): the scheduler's current program
  // when the wave was accepted (scheduler::async_replace).
  plan_hash program{};
  // The bucket it ran in (owned by the compiled program), or null when none
  // was picked.
  const bucket_id* bucket = nullptr;
  // The device it ran on (its index in the scheduler's devices; 0 when no
  // lane was handed over) and its lane there.
  std::size_t device = 0;
  std::uint32_t lane = 0;
  // The nodes it ran: the plan's but those compile culled
  // (compiled_program::culling; their gpu_nodes entries are empty).
  std::size_t nodes = 0;
  // The timeline value its submission signals; 0 when nothing was submitted.
  std::uint64_t submitted_value = 0;
  // When the wave started and when each phase ended (unset: not reached).
  std::chrono::steady_clock::time_point started;
  std::array<std::optional<std::chrono::steady_clock::time_point>, wave_phase_count> ended{};
  // For encoder_failed: the node whose encoder threw, and its message.
  // `message` also says what was wrong with refused semaphores
  // (wave_request::wait, ::signal), a submission's error, and whether the
  // semaphores of a failed wave could not be passed on.
  std::optional<std::size_t> failed_node;
  std::string message;
  // The wave whose output its history resources' previous copies held
  // (encode_context::history_wave); 0: reset to zeros, none, or the wave
  // never had the history's turn.
  std::uint64_t history_wave = 0;
  // With scheduler_options::gpu_timestamps, once the wave's fence was
  // reached: per node (node n at [n]), when its commands began on the GPU
  // (the work before them had ended) and when they ended; `gpu`, from the
  // first node's begin to the last node's end. Empty and unset when the
  // wave did not run to its fence (a wave cancelled after submit completes
  // before the GPU is done). `gpu_nodes` points into the wave's own memory:
  // it is valid until the completion handler returns (with use_awaitable,
  // until the coroutine next suspends), so copy what you keep.
  std::span<const gpu_interval> gpu_nodes;
  std::optional<gpu_interval> gpu;
  // The engine's images (wave_request::images), in the compiled program's
  // order (its lane recipe's images, not the request's), each
  // with the layout it is in once the wave's submitted value is reached —
  // what the engine's next use of it transitions from, or what the next
  // wave names (`request.images = report.images()` hands them on):
  // * the wave submitted: the layout of its last use in the plan (a
  //   `present` one: present-src), also when it was cancelled after submit;
  // * the wave submitted nothing (it failed or was cancelled before
  //   submit): the layout the wave named, the image untouched;
  // * part of it was submitted (a submission failed): undefined — the
  //   layout is not known, and a transition from undefined is always
  //   allowed (the contents are lost).
  // None when the wave's images were refused (resolve: invalid_image, ...).
  // `resource` points into the compiled program (valid while it is); no
  // allocation (at most max_wave_images).
  std::array<imported_image, max_wave_images> final_images{};
  std::size_t final_image_count = 0;

  [[nodiscard]] std::span<const imported_image> images() const noexcept {
    return std::span(final_images).first(final_image_count);
  }
  // The layout image `resource` is left in (images()); none when the wave
  // names no image for it.
  [[nodiscard]] std::optional<image_layout> final_layout(std::string_view resource) const noexcept {
    for (const imported_image& i : images())
      if (i.resource == resource) return i.layout;
    return std::nullopt;
  }
};

}  // namespace ferrum
