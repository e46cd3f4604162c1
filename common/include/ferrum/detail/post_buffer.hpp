// ferrum/detail/post_buffer.hpp — storage for the one function object an
// asynchronous operation posts to complete (internal).
#pragma once

#include <cstddef>
#include <new>

namespace ferrum::detail {

// Room for the one function object a completion posts to the waiter's
// executor, so that a wait completed from a device's thread (which has no
// Asio recycling cache) allocates nothing. Larger requests fall back to new.
class post_buffer {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment) {
    if (!in_use_ && bytes <= sizeof(storage_) && alignment <= alignof(std::max_align_t)) {
      in_use_ = true;
      return storage_;
    }
    return ::operator new(bytes, std::align_val_t(alignment));
  }
  void deallocate(void* pointer, std::size_t alignment) noexcept {
    if (pointer == storage_) {
      in_use_ = false;
      return;
    }
    ::operator delete(pointer, std::align_val_t(alignment));
  }

 private:
  alignas(std::max_align_t) unsigned char storage_[192];
  bool in_use_ = false;
};

template <class T>
struct post_allocator {
  using value_type = T;

  explicit post_allocator(post_buffer* b) noexcept : buffer(b) {}
  template <class U>
  post_allocator(const post_allocator<U>& other) noexcept : buffer(other.buffer) {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) { return static_cast<T*>(buffer->allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* pointer, std::size_t) noexcept { buffer->deallocate(pointer, alignof(T)); }

  template <class U>
  friend bool operator==(const post_allocator& a, const post_allocator<U>& b) noexcept {
    return a.buffer == b.buffer;
  }

  post_buffer* buffer;
};

}  // namespace ferrum::detail
