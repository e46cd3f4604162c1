// null_arena.hpp (private) — an arena on the null device: host memory, made
// by null_device_impl::do_create_arena (null_device.cpp).
#pragma once

#include "ferrum/gpu/arena.hpp"

#include <cstddef>
#include <new>

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

}  // namespace ferrum::gpu::null_detail
