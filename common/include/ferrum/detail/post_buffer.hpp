// ferrum/detail/post_buffer.hpp — storage for the one function object an
// asynchronous operation posts to complete (internal).
#pragma once

#include <atomic>
#include <cstddef>
#include <new>

namespace ferrum::detail {

// Room for what a completion posts to the waiter's executor, so that an
// operation completed from a device's thread (which has no Asio recycling
// cache) allocates nothing: the posted function object, and a second block
// for executors that add one of their own (a strand's invoker). Larger or
// further requests fall back to new. Allocation and deallocation may happen
// on different threads.
class post_buffer {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment) {
    if (bytes <= block_bytes && alignment <= alignof(std::max_align_t)) {
      for (std::size_t i = 0; i < blocks; ++i) {
        if (!in_use_[i].exchange(true, std::memory_order_acquire)) return storage_[i];
      }
    }
    return ::operator new(bytes, std::align_val_t(alignment));
  }
  void deallocate(void* pointer, std::size_t alignment) noexcept {
    for (std::size_t i = 0; i < blocks; ++i) {
      if (pointer == storage_[i]) {
        in_use_[i].store(false, std::memory_order_release);
        return;
      }
    }
    ::operator delete(pointer, std::align_val_t(alignment));
  }

 private:
  static constexpr std::size_t blocks = 2;
  static constexpr std::size_t block_bytes = 192;
  alignas(std::max_align_t) unsigned char storage_[blocks][block_bytes];
  std::atomic<bool> in_use_[blocks] = {};
};

// An allocator drawing on `Blocks` (anything with allocate(bytes, alignment)
// and deallocate(pointer, alignment)): what handlers are bound to so that
// Asio takes their operations' memory from there.
template <class T, class Blocks>
struct block_allocator {
  using value_type = T;

  explicit block_allocator(Blocks* b) noexcept : blocks(b) {}
  template <class U>
  block_allocator(const block_allocator<U, Blocks>& other) noexcept : blocks(other.blocks) {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) { return static_cast<T*>(blocks->allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* pointer, std::size_t) noexcept { blocks->deallocate(pointer, alignof(T)); }

  template <class U>
  friend bool operator==(const block_allocator& a, const block_allocator<U, Blocks>& b) noexcept {
    return a.blocks == b.blocks;
  }

  Blocks* blocks;
};

template <class T>
using post_allocator = block_allocator<T, post_buffer>;

}  // namespace ferrum::detail
