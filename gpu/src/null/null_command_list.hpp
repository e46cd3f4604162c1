// null_command_list.hpp (private) — a command list on the null device: the
// recorded commands that the queue's worker runs in order (null_queue.cpp).
#pragma once

#include "ferrum/gpu/command_list.hpp"

#include "null/null_arena.hpp"
#include "null/null_image.hpp"
#include "null/null_kernel.hpp"
#include "null/null_timestamp_pool.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <variant>
#include <vector>

namespace ferrum::gpu::null_detail {

// The worker is the GPU: it writes any range a command names, in the memory
// commands reach (a staged arena's host bytes only through stage).
inline std::span<std::byte> bytes_of(arena_range range) noexcept {
  return static_cast<const null_arena*>(range.arena)->gpu_bytes().subspan(range.offset, range.size);
}

// An event: whether it is signaled, as the worker last ran its commands.
class null_event final : public event {
 public:
  explicit null_event(const gpu::device& owner) noexcept : event(owner) {}
  [[nodiscard]] bool signaled() const noexcept { return signaled_.load(std::memory_order_relaxed); }
  void signal(bool on) const noexcept { signaled_.store(on, std::memory_order_relaxed); }

 private:
  mutable std::atomic<bool> signaled_{false};
};

// One recorded command. Lists keep their vector's capacity across begin(), so
// a list recorded again with as many commands allocates nothing.
struct command {
  // `barrier`: a list's last barrier, which no command of the list followed
  // (a stage-in list: stage, then barrier). It runs nothing; it carries the
  // barrier, so that it orders the next lists' commands after the list's.
  // `transition`: a layout change in a barrier (it stands alone: run
  // after the commands before the barrier, before those after it).
  // `set_event`, `wait_event`: a split barrier's two halves, of scope
  // `barrier` (their own; they carry no barrier before them: one due goes
  // to the next command); `reset_event` stands alone.
  enum class op {
    dispatch,
    fill,
    copy,
    stage,
    host,
    timestamp,
    barrier,
    transition,
    image_copy,
    clear,
    set_event,
    wait_event,
    reset_event
  } kind = op::host;
  const null_event* event = nullptr;
  const null_kernel* kernel = nullptr;
  // A transition's image, an image copy's, a dispatch's image primary;
  // `second_image`, a dispatch's image secondary.
  const null_image* image = nullptr;
  const null_image* second_image = nullptr;
  // A transition's layouts; an image copy's layout (`from`); a dispatch's
  // image operands' (`from`, `to`).
  image_layout from = image_layout::undefined;
  image_layout to = image_layout::undefined;
  // What of `image` (and `second_image`) the command reaches: a
  // transition's range, level 0 of every layer for a copy, a dispatch's
  // views' (one level of one layer) or the whole image.
  image_subresources range;
  image_subresources second_range;
  image_copy direction = image_copy::into_image;
  const null_timestamp_pool* timestamps = nullptr;
  arena_range first;
  arena_range second;
  std::array<std::uint32_t, max_kernel_push_words> push{};
  std::uint32_t value = 0;
  host_function function;
  // The stages it runs and the accesses it makes (ferrum/sync_scope.hpp),
  // and the barrier right before it (empty: none), by which
  // null_device_options::reorder_unordered orders it (null_queue.cpp).
  sync_scope scope;
  barrier_scope barrier;

  void run() const noexcept {
    switch (kind) {
      case op::dispatch:
        run_dispatch();
        break;
      case op::fill: {
        const std::span<std::byte> target = bytes_of(first);
        for (std::size_t at = 0; at < target.size(); at += 4) std::memcpy(target.data() + at, &value, 4);
        break;
      }
      case op::copy:
        std::memcpy(bytes_of(second).data(), bytes_of(first).data(), first.size);
        break;
      case op::stage:
        static_cast<const null_arena*>(first.arena)->stage();
        break;
      case op::host:
        function.call(function.context);
        break;
      case op::timestamp:
        timestamps->write(value);
        break;
      case op::barrier:
      case op::wait_event:
        break;
      case op::set_event:
        event->signal(true);
        break;
      case op::reset_event:
        event->signal(false);
        break;
      case op::transition:
        image->check(from, range, "a transition");
        image->set_layout(to, range);
        // From undefined the contents are not kept: they become a pattern
        // (all bits set: NaN as floats), so that a transition that should
        // have kept them shows in what is read after it.
        if (from == image_layout::undefined)
          for (std::uint32_t m = range.base_mip; m < range.base_mip + range.mips; ++m)
            for (std::uint32_t l = range.base_layer; l < range.base_layer + range.layers; ++l) {
              const std::span<std::byte> level = image->texels(m, l);
              std::memset(level.data(), 0xff, level.size());
            }
        break;
      case op::clear:
        image->check(from, range, "a clear");
        for (std::uint32_t m = 0; m < range.mips; ++m)
          for (std::uint32_t l = 0; l < range.layers; ++l) {
            const std::span<std::byte> level = image->texels(m, l);
            std::memset(level.data(), 0, level.size());
          }
        break;
      case op::image_copy:
        if (direction == image_copy::into_image) {
          image->check(from, range, "a copy into an image");
          std::memcpy(image->texels().data(), bytes_of(first).data(), first.size);
        } else {
          image->check(from, range, "a copy out of an image");
          std::memcpy(bytes_of(first).data(), image->texels().data(), first.size);
        }
        break;
    }
  }

  // A dispatch: its operands' bytes, its images checked in their layouts.
  void run_dispatch() const noexcept {
    kernel_args args;
    args.push = std::span(push).first(kernel->push_words());
    if (image != nullptr) {
      image->check(from, range, "a dispatch");
      args.primary = image->texels(range.base_mip, range.base_layer);
      args.primary_extent = image->extent(range.base_mip);
    } else {
      args.primary = bytes_of(first);
    }
    if (second_image != nullptr) {
      second_image->check(to, second_range, "a dispatch");
      args.secondary = second_image->texels(second_range.base_mip, second_range.base_layer);
      args.secondary_extent = second_image->extent(second_range.base_mip);
    } else if (second.arena != nullptr) {
      args.secondary = bytes_of(second);
    }
    kernel->cpu()(args);
  }

  // Runs alone in a reordered stretch (null_device_options::reorder_unordered).
  [[nodiscard]] bool alone() const noexcept {
    return kind == op::host || kind == op::timestamp || kind == op::transition || kind == op::reset_event;
  }
};

class null_command_list final : public command_list {
 public:
  null_command_list(const gpu::device& owner, queue_kind kind, list_stages stages) noexcept
      : command_list(owner, kind, stages) {}

  void run() const noexcept {
    for (const command& c : commands_) c.run();
  }
  [[nodiscard]] std::span<const command> commands() const noexcept { return commands_; }

 protected:
  result<void> do_begin() override {
    commands_.clear();
    due_ = {};
    return {};
  }
  result<void> do_dispatch(const kernel& k, const kernel_operand& primary, const kernel_operand& secondary,
                           std::span<const std::uint32_t> push) override {
    command& c = add(command::op::dispatch, {stages::compute_shader, 0});
    c.kernel = static_cast<const null_kernel*>(&k);
    if (const auto* img = std::get_if<image_operand>(&primary)) {
      c.image = static_cast<const null_image*>(img->image);
      c.from = img->layout;
      c.range = reached(*img);
    } else {
      c.first = std::get<arena_range>(primary);
    }
    if (const auto* img = std::get_if<image_operand>(&secondary)) {
      c.second_image = static_cast<const null_image*>(img->image);
      c.to = img->layout;
      c.second_range = reached(*img);
    } else {
      c.second = std::get<arena_range>(secondary);
    }
    std::copy(push.begin(), push.end(), c.push.begin());
    const auto made = [](kernel_operand_kind kind) -> access_mask {
      return kind == kernel_operand_kind::sampled_image ? accesses::sampled_read
                                                        : accesses::storage_read | accesses::storage_write;
    };
    c.scope.accesses = made(k.primary()) | made(k.secondary());
    return {};
  }
  result<void> do_fill(arena_range target, std::uint32_t value) override {
    command& c = add(command::op::fill, {stages::transfer, accesses::transfer_write});
    c.first = target;
    c.value = value;
    return {};
  }
  result<void> do_copy(arena_range source, arena_range destination) override {
    command& c = add(command::op::copy, copy_scope);
    c.first = source;
    c.second = destination;
    return {};
  }
  result<void> do_stage(const arena& a) override {
    add(command::op::stage, copy_scope).first = a.whole();
    return {};
  }
  result<void> do_image_copy(const gpu::image& img, image_layout layout, arena_range bytes,
                             image_copy direction) override {
    command& c = add(command::op::image_copy, copy_scope);
    c.image = static_cast<const null_image*>(&img);
    c.from = layout;
    c.range = {0, 1, 0, img.spec().layers};
    c.first = bytes;
    c.direction = direction;
    return {};
  }
  result<void> do_clear(const gpu::image& img, image_layout layout) override {
    command& c = add(command::op::clear, {stages::transfer, accesses::transfer_write});
    c.image = static_cast<const null_image*>(&img);
    c.from = layout;
    c.range = image_subresources::whole(img.spec());
    return {};
  }
  result<void> do_host(host_function function) override {
    add(command::op::host, {}).function = function;
    return {};
  }
  result<void> do_timestamp(const timestamp_pool& pool, std::uint32_t slot) override {
    command& c = add(command::op::timestamp, {});
    c.timestamps = static_cast<const null_timestamp_pool*>(&pool);
    c.value = slot;
    return {};
  }
  result<native_commands> do_native() override {
    return make_error(errc::native_unavailable,
                      "record_native: the null device's worker runs ferrum's commands only; it has no command buffer");
  }
  result<void> do_end() override {
    // A barrier after the last command orders what comes after the list:
    // kept as a command of its own (of no stage), since no command of this
    // list carries it.
    if (!due_.empty()) add(command::op::barrier, {});
    return {};
  }
  // The worker runs commands one after another, each seeing every earlier
  // one's writes, unless it reorders what no barrier orders: the barrier's
  // scope is kept on the next command (or, at the end, on a barrier
  // command). Its layout changes are commands that each stand alone, after
  // it.
  void do_barrier(const barrier_scope& scope, std::span<const layout_change> changes) noexcept override {
    due_ |= scope;
    for (const layout_change& change : changes) {
      command& c = add(command::op::transition, {});
      c.image = static_cast<const null_image*>(change.image);
      c.from = change.from;
      c.to = change.to;
      c.range = change.range;
    }
    due_ |= scope;
  }

  // Appended as commands of no stage; the barrier due stays for the next
  // command.
  void do_event(event_op op, const gpu::event& e, const barrier_scope& scope) noexcept override {
    command& c = commands_.emplace_back();
    c.kind = op == event_op::set    ? command::op::set_event
             : op == event_op::wait ? command::op::wait_event
                                    : command::op::reset_event;
    c.event = static_cast<const null_event*>(&e);
    c.barrier = scope;
  }

 private:
  // What a dispatch's image operand reaches: its view's range, or the
  // whole image (of one level and one layer).
  static image_subresources reached(const image_operand& op) noexcept {
    return op.view != nullptr ? op.view->range() : image_subresources::whole(op.image->spec());
  }
  static constexpr sync_scope copy_scope{stages::transfer, accesses::transfer_read | accesses::transfer_write};

  command& add(command::op kind, const sync_scope& scope) {
    command& c = commands_.emplace_back();
    c.kind = kind;
    c.scope = scope;
    c.barrier = std::exchange(due_, {});
    return c;
  }

  std::vector<command> commands_;
  // The barriers since the last command.
  barrier_scope due_;
};

}  // namespace ferrum::gpu::null_detail
