// null_arena.hpp (private) — an arena on the null device: host memory, made
// by null_device_impl::do_create_arena (null_device.cpp). `gpu_bytes()` is
// what commands reach; the host's bytes are the same memory, none (a device
// arena) or, staged, a second buffer that only stage commands copy.
#pragma once

#include "ferrum/gpu/arena.hpp"

#include <cstddef>
#include <cstring>
#include <new>

namespace ferrum::gpu::null_detail {

class null_arena final : public arena {
 public:
  // 64-byte aligned like a GPU allocation, so slot alignments up to 64 hold
  // in host addresses too.
  static constexpr std::align_val_t alignment{64};

  // `storage`: the commands' memory; `staging`: the host's buffer when
  // staged (else null). Both of `bytes` bytes; the arena frees them.
  null_arena(const gpu::device& owner, std::byte* storage, std::byte* staging, std::size_t bytes,
             memory_class cls) noexcept
      : arena(owner, host_of(storage, staging, bytes, cls), bytes, 0, cls, staging != nullptr),
        storage_(storage),
        staging_(staging) {}
  // An arena of create_arena(bytes): the host's bytes are the storage.
  null_arena(const gpu::device& owner, std::byte* storage, std::size_t bytes) noexcept
      : arena(owner, {storage, bytes}, 0), storage_(storage) {}
  ~null_arena() override {
    ::operator delete[](storage_, alignment);
    if (staging_ != nullptr) ::operator delete[](staging_, alignment);
  }

  [[nodiscard]] std::span<std::byte> gpu_bytes() const noexcept { return {storage_, size()}; }

  // The staging copy in the direction of the arena's class.
  void stage() const noexcept {
    if (cls() == memory_class::upload)
      std::memcpy(storage_, staging_, size());
    else
      std::memcpy(staging_, storage_, size());
  }

 private:
  static std::span<std::byte> host_of(std::byte* storage, std::byte* staging, std::size_t bytes,
                                      memory_class cls) noexcept {
    if (!host_touches(cls)) return {};
    return {staging != nullptr ? staging : storage, bytes};
  }

  std::byte* storage_;
  std::byte* staging_ = nullptr;
};

}  // namespace ferrum::gpu::null_detail
