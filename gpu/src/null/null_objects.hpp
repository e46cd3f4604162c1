// null_objects (private) — the null device's arenas, kernels, timestamp pools
// and command lists: host memory, C++ kernels, the worker's steady_clock,
// and recorded commands that the queue's worker runs in order
// (null_device.cpp).
#pragma once

#include "ferrum/gpu/null_device.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace ferrum::gpu::null_detail {

class null_arena final : public arena {
 public:
  // 64-byte aligned like a GPU allocation, so slot alignments up to 64 hold
  // in host addresses too.
  static constexpr std::align_val_t alignment{64};

  null_arena(const gpu::device& owner, std::byte* storage, std::size_t bytes) noexcept
      : arena(owner, {storage, bytes}, 0), storage_(storage) {}
  ~null_arena() override { ::operator delete[](storage_, alignment); }

 private:
  std::byte* storage_;
};

class null_kernel final : public kernel {
 public:
  null_kernel(const gpu::device& owner, const kernel_source& source) noexcept
      : kernel(owner, source.name, source.push_words, source.local_size_x), cpu_(source.cpu) {}
  [[nodiscard]] cpu_kernel cpu() const noexcept { return cpu_; }

 private:
  cpu_kernel cpu_;
};

// The worker's clock is the GPU's: a slot holds the steady_clock ticks at
// which the worker reached its timestamp command (0: never written). The
// worker writes a slot before it advances the timeline; a reader reads it
// after seeing that value reached, which orders the two.
class null_timestamp_pool final : public timestamp_pool {
 public:
  null_timestamp_pool(const gpu::device& owner, std::uint32_t size) : timestamp_pool(owner, size), ticks_(size, 0) {}

  void stamp(std::uint32_t slot) const noexcept {
    ticks_[slot] = std::chrono::steady_clock::now().time_since_epoch().count();
  }

 protected:
  result<void> do_read(std::uint32_t first, std::span<time_point> out) const override {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::chrono::steady_clock::rep ticks = ticks_[first + i];
      if (ticks == 0)
        return make_error(errc::timestamp_unavailable, "slot " + std::to_string(first + i) + " was never written");
      out[i] = time_point(std::chrono::steady_clock::duration(ticks));
    }
    return {};
  }

 private:
  // Written by the worker through a const pool: the GPU writes what lists
  // name, as it writes arenas.
  mutable std::vector<std::chrono::steady_clock::rep> ticks_;
};

// The worker is the GPU: it writes any range a command names. Ranges carry a
// const arena (read access for their holders); the arena itself is not const.
inline std::span<std::byte> bytes_of(arena_range range) noexcept {
  return const_cast<arena*>(range.arena)->bytes().subspan(range.offset, range.size);
}

// One recorded command. Lists keep their vector's capacity across begin(), so
// a list recorded again with as many commands allocates nothing.
struct command {
  enum class op { dispatch, fill, copy, host, timestamp } kind = op::host;
  const null_kernel* kernel = nullptr;
  const null_timestamp_pool* stamps = nullptr;
  arena_range first;
  arena_range second;
  std::array<std::uint32_t, max_kernel_push_words> push{};
  std::uint32_t value = 0;
  host_function function;

  void run() const noexcept {
    switch (kind) {
      case op::dispatch:
        kernel->cpu()({bytes_of(first), second.arena != nullptr ? bytes_of(second) : std::span<std::byte>{},
                       std::span(push).first(kernel->push_words())});
        break;
      case op::fill: {
        const std::span<std::byte> target = bytes_of(first);
        for (std::size_t at = 0; at < target.size(); at += 4) std::memcpy(target.data() + at, &value, 4);
        break;
      }
      case op::copy:
        std::memcpy(bytes_of(second).data(), bytes_of(first).data(), first.size);
        break;
      case op::host:
        function.call(function.context);
        break;
      case op::timestamp:
        stamps->stamp(value);
        break;
    }
  }
};

class null_command_list final : public command_list {
 public:
  null_command_list(const gpu::device& owner, queue_kind kind) noexcept : command_list(owner, kind) {}

  void run() const noexcept {
    for (const command& c : commands_) c.run();
  }

 protected:
  result<void> do_begin() override {
    commands_.clear();
    return {};
  }
  result<void> do_dispatch(const kernel& k, arena_range primary, arena_range secondary,
                           std::span<const std::uint32_t> push) override {
    command& c = add(command::op::dispatch);
    c.kernel = static_cast<const null_kernel*>(&k);
    c.first = primary;
    c.second = secondary;
    std::copy(push.begin(), push.end(), c.push.begin());
    return {};
  }
  result<void> do_fill(arena_range target, std::uint32_t value) override {
    command& c = add(command::op::fill);
    c.first = target;
    c.value = value;
    return {};
  }
  result<void> do_copy(arena_range source, arena_range destination) override {
    command& c = add(command::op::copy);
    c.first = source;
    c.second = destination;
    return {};
  }
  result<void> do_host(host_function function) override {
    add(command::op::host).function = function;
    return {};
  }
  result<void> do_timestamp(const timestamp_pool& pool, std::uint32_t slot) override {
    command& c = add(command::op::timestamp);
    c.stamps = static_cast<const null_timestamp_pool*>(&pool);
    c.value = slot;
    return {};
  }
  result<void> do_end() override { return {}; }

 private:
  command& add(command::op kind) {
    command& c = commands_.emplace_back();
    c.kind = kind;
    return c;
  }

  std::vector<command> commands_;
};

}  // namespace ferrum::gpu::null_detail
