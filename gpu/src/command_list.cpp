#include "ferrum/gpu/command_list.hpp"

#include <algorithm>

#include "ferrum/gpu/device.hpp"
#include "ferrum/gpu/queue.hpp"

#include <array>
#include <string>
#include <variant>

namespace ferrum::gpu {
namespace {

std::string describe(const char* command, const char* role, arena_range range) {
  return std::string(command) + " " + role + " range [" + std::to_string(range.offset) + ", +" +
         std::to_string(range.size) + ") of an arena of " + std::to_string(range.arena->size()) + " bytes";
}

bool overlap(arena_range a, arena_range b) noexcept {
  return a.arena == b.arena && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

// A transfer command's scope: the transfer stage, with `made`.
constexpr sync_scope transfer_scope(access_mask made) noexcept { return {stages::transfer, made}; }

}  // namespace

bool command_list::last_submission_reached() const noexcept {
  return submitted_on_ == nullptr || submitted_on_->timeline().reached(submitted_value_);
}

bool command_list::executable() const noexcept {
  return state_ == state::executable || (state_ == state::submitted && last_submission_reached());
}

result<void> command_list::begin(list_opening opening) {
  if (state_ == state::submitted && !last_submission_reached())
    return make_error(errc::command_list_in_flight,
                      "begin while timeline value " + std::to_string(submitted_value_) + " is not reached");
  if (device_->lost()) return make_error(errc::device_lost, "begin");
  if (auto r = do_begin(); !r) return r;
  state_ = state::recording;
  commands_ = 0;
  barriers_ = 0;
  events_ = 0;
  pending_.clear();
  barrier_due_ = false;
  recorded_ = {};
  last_barrier_ = {};
  opening_ = opening == list_opening::barrier ? barrier_scope::full() : barrier_scope{};
  return {};
}

result<void> command_list::begin(const barrier_scope& opening) {
  if (auto r = begin(list_opening::by_hazards); !r) return r;
  opening_ = opening;
  return {};
}

result<void> command_list::check_recording(const char* command) const {
  if (state_ != state::recording)
    return make_error(errc::command_list_state, std::string(command) + " outside begin() ... end()");
  return {};
}

result<void> command_list::record_event(const char* command, event_op op, const event& e, const barrier_scope& scope) {
  if (auto r = check_recording(command); !r) return r;
  if (&e.device() != device_)
    return make_error(errc::foreign_object, std::string(command) + " of another device's event");
  // A transfer queue of its own may be a family without compute.
  if (kind_ == queue_kind::transfer && &device_->queue(queue_kind::transfer) != &device_->queue())
    return make_error(errc::unsupported_command, std::string(command) +
                                                     " on a list for a transfer queue of its own (events are set on "
                                                     "graphics and compute queues)");
  do_event(op, e, scope);
  ++events_;
  return {};
}

result<void> command_list::set_event(const event& e, const barrier_scope& scope) {
  return record_event("set_event", event_op::set, e, scope);
}

result<void> command_list::wait_event(const event& e, const barrier_scope& scope) {
  return record_event("wait_event", event_op::wait, e, scope);
}

result<void> command_list::reset_event(const event& e) { return record_event("reset_event", event_op::reset, e, {}); }

result<void> command_list::check_range(const char* command, const char* role, arena_range range, access mode,
                                       std::uint32_t usage) const {
  if (&range.arena->device() != device_)
    return make_error(errc::foreign_object, std::string(command) + " " + role + " arena belongs to another device");
  if (const std::uint32_t lacking = usage & ~range.arena->usage(); lacking != 0)
    return make_error(errc::buffer_usage_missing, describe(command, role, range) + ": the buffer was made without " +
                                                      buffer_usage_names(lacking) + " usage (it has " +
                                                      buffer_usage_names(range.arena->usage()) + ")");
  if (range.offset > range.arena->size() || range.size > range.arena->size() - range.offset)
    return make_error(errc::range_out_of_bounds, describe(command, role, range));
  if (range.offset % 4 != 0 || range.size % 4 != 0)
    return make_error(errc::misaligned_range, describe(command, role, range));
  if (range.arena->guarded() && !granted(range, mode))
    return make_error(errc::range_not_granted,
                      describe(command, role, range) +
                          (mode == access::write ? " writes a guarded arena outside the ranges granted to the list"
                                                 : " reads a guarded arena in which the list is granted nothing"));
  return {};
}

bool command_list::granted(arena_range range, access mode) const noexcept {
  return std::any_of(granted_.begin(), granted_.end(), [&](const arena_range& g) {
    if (g.arena != range.arena) return false;
    return mode == access::read ||
           (range.offset >= g.offset && range.size <= g.size && range.offset - g.offset <= g.size - range.size);
  });
}

result<void> command_list::recorded(result<void> r) {
  if (r) ++commands_;
  return r;
}

sync_scope command_list::native_scope() const noexcept {
  // Every stage a list of its kind and stages may run, every access made
  // in them (record_native).
  if (kind_ == queue_kind::transfer) return transfer_scope(accesses::transfer_read | accesses::transfer_write);
  constexpr access_mask compute_accesses = accesses::indirect_read | accesses::uniform_read | accesses::sampled_read |
                                           accesses::storage_read | accesses::storage_write | accesses::transfer_read |
                                           accesses::transfer_write;
  if (stages_ == list_stages::graphics)
    return {stages::graphics | stages::compute_shader | stages::transfer,
            accesses::all & ~(accesses::host_read | accesses::host_write)};
  return {stages::compute_shader | stages::transfer | stages::draw_indirect, compute_accesses};
}

void command_list::order(const sync_scope& scope, std::initializer_list<arena_range> ranges) noexcept {
  const bool outside = std::any_of(ranges.begin(), ranges.end(), [this](const arena_range& range) {
    // Granted: the owner orders it (a lane's range, a wave's imported
    // buffer). Anything else — a guarded arena's bytes the node does not
    // list, an arena of the caller's own — the owner cannot see.
    return range.arena != nullptr && !granted(range, access::write);
  });
  barrier_scope b;
  if (outside) {
    b = barrier_scope::full();
  } else if (barrier_due_) {
    // Every earlier command of the list directly before this one.
    b = {recorded_, scope};
  } else {
    b = opening_;
  }
  if (!b.empty() || !pending_.empty()) record_barrier(b);
  opening_ = {};
  recorded_ |= scope;
  // The next command of the list is ordered after this one.
  barrier_due_ = true;
}

void command_list::record_barrier(const barrier_scope& scope) noexcept {
  do_barrier(scope, pending_);
  pending_.clear();
  last_barrier_ = scope;
  ++barriers_;
}

result<void> command_list::dispatch(const kernel& k, const kernel_operand& primary, const kernel_operand& secondary,
                                    std::span<const std::uint32_t> push) {
  if (auto r = check_recording("dispatch"); !r) return r;
  if (&k.device() != device_)
    return make_error(errc::foreign_object, "dispatch of kernel " + quote_text(k.name()) + " made by another device");
  // A transfer-only queue family runs no compute pipeline, so a list for the
  // transfer queue records none on any device.
  if (kind_ == queue_kind::transfer)
    return make_error(errc::unsupported_command,
                      "dispatch of kernel " + quote_text(k.name()) + " on a list made for the transfer queue");
  if (push.size() > k.push_words())
    return make_error(errc::push_constants_too_large, "kernel " + quote_text(k.name()) + " takes " +
                                                          std::to_string(k.push_words()) + " words, given " +
                                                          std::to_string(push.size()));
  if (auto r = check_operand(k, false, primary); !r) return r;
  if (auto r = check_operand(k, true, secondary); !r) return r;
  const auto* first = std::get_if<arena_range>(&primary);
  const auto* second = std::get_if<arena_range>(&secondary);
  if (first != nullptr && first->size == 0) return {};
  // Devices always receive exactly the kernel's words; missing ones are zero,
  // so a shader never reads push constants that were not set.
  std::array<std::uint32_t, max_kernel_push_words> words{};
  std::copy(push.begin(), push.end(), words.begin());
  // A kernel reads and writes its buffers and storage images, samples its
  // sampled images (storage descriptors and push constants: no uniform
  // buffer, no indirect arguments).
  const auto operand_accesses = [&](kernel_operand_kind kind) -> access_mask {
    if (kind == kernel_operand_kind::sampled_image) return accesses::sampled_read;
    return accesses::storage_read | accesses::storage_write;
  };
  order({stages::compute_shader, operand_accesses(k.primary()) | operand_accesses(k.secondary())},
        {first != nullptr ? *first : arena_range{}, second != nullptr ? *second : arena_range{}});
  return recorded(do_dispatch(k, primary, secondary, std::span(words).first(k.push_words())));
}

result<void> command_list::check_operand(const kernel& k, bool secondary, const kernel_operand& operand) const {
  const char* role = secondary ? "secondary" : "primary";
  const kernel_operand_kind kind = secondary ? k.secondary() : k.primary();
  // Built only for an error: a dispatch that passes allocates nothing.
  const auto what = [&] { return "dispatch of kernel " + quote_text(k.name()) + ": its " + role; };
  if (kind == kernel_operand_kind::buffer) {
    const auto* range = std::get_if<arena_range>(&operand);
    if (range == nullptr) return make_error(errc::kernel_operand_mismatch, what() + " is a buffer, given an image");
    if (range->arena == nullptr) {
      // An empty buffer secondary binds the primary's arena again: there
      // is none beside an image primary.
      if (!secondary) return make_error(errc::range_out_of_bounds, "dispatch without a primary range");
      if (k.primary() != kernel_operand_kind::buffer)
        return make_error(errc::kernel_operand_mismatch, what() + " is a buffer, given none beside an image primary");
      return {};
    }
    // A kernel may write any range it is given.
    return check_range("dispatch", role, *range, access::write, buffer_usage::storage);
  }
  const auto* op = std::get_if<image_operand>(&operand);
  if (op == nullptr || op->image == nullptr)
    return make_error(errc::kernel_operand_mismatch, what() + " is a " + std::string(to_string(kind)) + ", given " +
                                                         (op == nullptr ? "a range" : "none"));
  const image& img = *op->image;
  if (&img.device() != device_) return make_error(errc::foreign_object, what() + " is an image of another device");
  const image_spec& spec = img.spec();
  if (op->view != nullptr) {
    if (&op->view->image() != &img)
      return make_error(errc::invalid_image, what() + " is given a view of another image than its own");
    const image_subresources& range = op->view->range();
    if (range.mips != 1 || range.layers != 1)
      return make_error(errc::invalid_image, what() + " is given a view of " + subresources_text(range) +
                                                 " (a kernel takes one level of one layer)");
  } else if (spec.mips != 1 || spec.layers != 1) {
    return make_error(errc::invalid_image, what() + " has " + std::to_string(spec.mips) + " levels and " +
                                               std::to_string(spec.layers) +
                                               " layers (a kernel takes one of each: a view of one)");
  }
  const bool storage = kind == kernel_operand_kind::storage_image;
  if ((spec.usage & (storage ? image_usage::storage : image_usage::sampled)) == 0)
    return make_error(errc::invalid_image, what() + " is a " + std::string(to_string(kind)) + ", made without " +
                                               (storage ? "storage" : "sampled") + " usage");
  const image_layout needed = storage ? image_layout::general : image_layout::shader_read_only;
  if (op->layout != needed)
    return make_error(errc::invalid_image, what() + " is a " + std::string(to_string(kind)) + " in layout " +
                                               std::string(to_string(op->layout)) + " (" +
                                               std::string(to_string(needed)) + ")");
  return {};
}

result<void> command_list::fill(arena_range target, std::uint32_t value) {
  if (auto r = check_recording("fill"); !r) return r;
  if (target.arena == nullptr) return make_error(errc::range_out_of_bounds, "fill without a range");
  if (auto r = check_range("fill", "target", target, access::write, buffer_usage::transfer_dst); !r) return r;
  if (target.size == 0) return {};
  order(transfer_scope(accesses::transfer_write), {target});
  return recorded(do_fill(target, value));
}

result<void> command_list::copy(arena_range source, arena_range destination) {
  if (auto r = check_recording("copy"); !r) return r;
  if (source.arena == nullptr || destination.arena == nullptr)
    return make_error(errc::range_out_of_bounds, "copy without a source or destination range");
  if (auto r = check_range("copy", "source", source, access::read, buffer_usage::transfer_src); !r) return r;
  if (auto r = check_range("copy", "destination", destination, access::write, buffer_usage::transfer_dst); !r) return r;
  if (source.size != destination.size)
    return make_error(errc::copy_size_mismatch,
                      "copy of " + std::to_string(source.size) + " bytes into " + std::to_string(destination.size));
  if (overlap(source, destination))
    return make_error(errc::overlapping_copy,
                      describe("copy", "source", source) + " overlaps " + describe("copy", "destination", destination));
  if (source.size == 0) return {};
  order(transfer_scope(accesses::transfer_read | accesses::transfer_write), {source, destination});
  return recorded(do_copy(source, destination));
}

result<void> command_list::stage(const arena& a) {
  if (auto r = check_recording("stage"); !r) return r;
  if (&a.device() != device_) return make_error(errc::foreign_object, "stage of an arena of another device");
  if (!a.staged())
    return make_error(errc::not_staged, "stage of a " + std::string(to_string(a.cls())) + " arena of " +
                                            std::to_string(a.size()) + " bytes, which has no staging buffer");
  if (a.guarded() && !granted(a.whole(), access::write))
    return make_error(errc::range_not_granted,
                      describe("stage", "whole", a.whole()) + " of a guarded arena that the list is not granted whole");
  // A copy between the staging buffer and the arena's: the host's writes
  // before the submission are visible to it without a barrier, and end()
  // makes its writes visible to the host, so a barrier names no host access.
  order(transfer_scope(accesses::transfer_read | accesses::transfer_write), {a.whole()});
  return recorded(do_stage(a));
}

result<void> command_list::barrier() {
  if (auto r = check_recording("barrier"); !r) return r;
  record_barrier(barrier_scope::full());
  barrier_due_ = false;
  opening_ = {};
  return {};
}

result<void> command_list::transition(const image& img, image_layout from, image_layout to) {
  return transition(img, from, to, image_subresources::whole(img.spec()));
}

result<void> command_list::transition(const image& img, image_layout from, image_layout to,
                                      const image_subresources& range) {
  if (auto r = check_recording("transition"); !r) return r;
  if (&img.device() != device_) return make_error(errc::foreign_object, "transition of an image of another device");
  if (to == image_layout::undefined)
    return make_error(errc::invalid_image, "transition from " + std::string(to_string(from)) +
                                               " to undefined (an image is never put back in it)");
  if (!usage_allows(img.spec().usage, to))
    return make_error(errc::invalid_image,
                      "transition to " + std::string(to_string(to)) + " of an image made without the usage it needs");
  if (!fits(range, img.spec()))
    return make_error(errc::invalid_image, "transition to " + std::string(to_string(to)) + " of " +
                                               subresources_text(range) + " of an image of " +
                                               subresources_text(image_subresources::whole(img.spec())));
  // Changes of one subresource in one barrier would be unordered: those
  // pending go into a barrier of their own first.
  if (std::any_of(pending_.begin(), pending_.end(),
                  [&](const layout_change& c) { return c.image == &img && overlaps(c.range, range); }))
    record_barrier({});  // the layouts' own scopes: the command's barrier comes later
  pending_.push_back({&img, from, to, range});
  return {};
}

result<void> command_list::image_copy_checks(const image& img, image_layout layout, arena_range bytes,
                                             image_copy direction) const {
  const bool into = direction == image_copy::into_image;
  const char* command = into ? "copy into an image" : "copy out of an image";
  if (auto r = check_recording(command); !r) return r;
  if (&img.device() != device_) return make_error(errc::foreign_object, std::string(command) + " of another device");
  if (bytes.arena == nullptr) return make_error(errc::range_out_of_bounds, std::string(command) + " without a range");
  if (auto r = check_range(command, into ? "source" : "destination", bytes, into ? access::read : access::write,
                           into ? buffer_usage::transfer_src : buffer_usage::transfer_dst);
      !r)
    return r;
  const image_spec& spec = img.spec();
  // A copy between a buffer and a depth-stencil image moves one aspect,
  // each laid out in the buffer its own way: not what one range holds.
  if (has_stencil(spec.format))
    return make_error(errc::invalid_image, std::string(command) + " of format " + quote_text(to_string(spec.format)) +
                                               ": a depth-stencil image is not copied to or from a buffer");
  // Vulkan copies whole texels (4x4 blocks of a block-compressed format)
  // from a buffer offset that is a multiple of the block's size and of 4.
  if (const std::uint64_t align = std::max<std::uint64_t>(4, block_bytes(spec.format)); bytes.offset % align != 0)
    return make_error(errc::misaligned_range, describe(command, into ? "source" : "destination", bytes) +
                                                  ": not at a multiple of " + std::to_string(align) + " (a " +
                                                  std::to_string(block_bytes(spec.format)) + "-byte " +
                                                  (is_block_compressed(spec.format) ? "block" : "texel") + ")");
  const image_layout copy_layout = into ? image_layout::transfer_dst : image_layout::transfer_src;
  if (layout != copy_layout && layout != image_layout::general)
    return make_error(errc::invalid_image, std::string(command) + " in layout " + std::string(to_string(layout)) +
                                               " (" + std::string(to_string(copy_layout)) + " or general)");
  const std::uint32_t usage = into ? image_usage::transfer_dst : image_usage::transfer_src;
  if ((spec.usage & usage) == 0)
    return make_error(errc::invalid_image,
                      std::string(command) + " made without " + (into ? "transfer-dst" : "transfer-src") + " usage");
  if (bytes.size != copy_bytes(spec))
    return make_error(errc::copy_size_mismatch, std::string(command) + ": " + std::to_string(bytes.size) +
                                                    " bytes for an image of " + std::to_string(copy_bytes(spec)));
  return {};
}

result<void> command_list::copy(arena_range source, const image& destination, image_layout layout) {
  if (auto r = image_copy_checks(destination, layout, source, image_copy::into_image); !r) return r;
  order(transfer_scope(accesses::transfer_read | accesses::transfer_write), {source});
  return recorded(do_image_copy(destination, layout, source, image_copy::into_image));
}

result<void> command_list::copy(const image& source, image_layout layout, arena_range destination) {
  if (auto r = image_copy_checks(source, layout, destination, image_copy::out_of_image); !r) return r;
  order(transfer_scope(accesses::transfer_read | accesses::transfer_write), {destination});
  return recorded(do_image_copy(source, layout, destination, image_copy::out_of_image));
}

result<void> command_list::clear(const image& img, image_layout layout) {
  if (auto r = check_recording("clear"); !r) return r;
  if (&img.device() != device_) return make_error(errc::foreign_object, "clear of an image of another device");
  const image_spec& spec = img.spec();
  if (layout != image_layout::transfer_dst && layout != image_layout::general)
    return make_error(errc::invalid_image,
                      "clear of an image in layout " + std::string(to_string(layout)) + " (transfer-dst or general)");
  if ((spec.usage & image_usage::transfer_dst) == 0)
    return make_error(errc::invalid_image, "clear of an image made without transfer-dst usage");
  if (is_block_compressed(spec.format))
    return make_error(errc::invalid_image, "clear of an image of format " + quote_text(to_string(spec.format)) +
                                               ": a block-compressed image is not cleared");
  // Vulkan clears depth and stencil on a queue with graphics only.
  if (is_depth(spec.format) && stages_ != list_stages::graphics)
    return make_error(errc::unsupported_command, "clear of a depth image of format " +
                                                     quote_text(to_string(spec.format)) +
                                                     " on a list without graphics stages (list_stages::graphics)");
  order(transfer_scope(accesses::transfer_write), {});
  return recorded(do_clear(img, layout));
}

result<void> command_list::host(host_function function) {
  if (auto r = check_recording("host"); !r) return r;
  if (function.call == nullptr) return make_error(errc::unsupported_command, "host function without a function");
  return recorded(do_host(function));
}

result<void> command_list::timestamp(const timestamp_pool& pool, std::uint32_t slot) {
  if (auto r = check_recording("timestamp"); !r) return r;
  if (&pool.device() != device_)
    return make_error(errc::foreign_object, "timestamp into a pool made by another device");
  if (slot >= pool.size())
    return make_error(errc::range_out_of_bounds,
                      "timestamp slot " + std::to_string(slot) + " of a pool of " + std::to_string(pool.size()));
  if (auto r = do_timestamp(pool, slot); !r) return r;
  // A device copies the result into the pool's buffer (a transfer write):
  // later barriers of the list wait for it as for a command's.
  recorded_ |= transfer_scope(accesses::transfer_write);
  return {};
}

result<native_commands> command_list::record_native() {
  if (auto r = check_recording("record_native"); !r) return r.error();
  auto native = do_native();
  if (!native) return native;
  // Ordered as a command of the list, before the caller records into it:
  // it may use every stage the list may.
  order(native_scope(), {});
  ++commands_;
  return native;
}

result<void> command_list::end() {
  if (auto r = check_recording("end"); !r) return r;
  // Transitions no command followed are made all the same (in their
  // layouts' scopes).
  if (!pending_.empty()) record_barrier({});
  if (auto r = do_end(); !r) return r;
  state_ = state::executable;
  return {};
}

}  // namespace ferrum::gpu
