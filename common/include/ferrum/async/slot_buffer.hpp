// ferrum/async/slot_buffer.hpp — the memory of the function objects an
// asynchronous operation posts, kept inside the operation so that completing
// it allocates nothing.
//
//   ferrum::async::slot_buffer<192> buffer;              // two slots
//   asio::post(executor, asio::bind_allocator(ferrum::async::slot_allocator<void, 192>(&buffer), f));
//
// A completion is often posted from a device's thread, which has no Asio
// recycling cache: without a buffer of its own, each post would allocate.
// Every slot has `SlotBytes` bytes; a request that is larger, more aligned
// than std::max_align_t, or finds every slot taken falls back to operator
// new. Allocation and deallocation may happen on different threads.
//
// The slots live in a boost::container::small_vector: an operation's two
// slots are inline (no allocation when the operation is made), a wave's one
// per encoder task plus a few are allocated once, when the wave is made.
#pragma once

#include <boost/container/small_vector.hpp>

#include <atomic>
#include <cstddef>
#include <new>

namespace ferrum::async {

template <std::size_t SlotBytes>
class slot_buffer {
 public:
  explicit slot_buffer(std::size_t slots = 2) : slots_(slots) {}
  slot_buffer(const slot_buffer&) = delete;
  slot_buffer& operator=(const slot_buffer&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment) {
    if (bytes <= SlotBytes && alignment <= alignof(std::max_align_t)) {
      for (slot& s : slots_) {
        if (!s.used.exchange(true, std::memory_order_acquire)) return s.bytes;
      }
    }
    return ::operator new(bytes, std::align_val_t(alignment));
  }

  void deallocate(void* pointer, std::size_t alignment) noexcept {
    for (slot& s : slots_) {
      if (pointer == s.bytes) {
        s.used.store(false, std::memory_order_release);
        return;
      }
    }
    ::operator delete(pointer, std::align_val_t(alignment));
  }

 private:
  struct slot {
    slot() noexcept = default;
    // Slots are made with the buffer and never moved while in use; the
    // container asks for moves only to compile its growth path, which a
    // buffer sized once never takes. A "moved" slot is a fresh, free one.
    slot(slot&&) noexcept {}
    slot& operator=(slot&&) noexcept { return *this; }

    alignas(std::max_align_t) unsigned char bytes[SlotBytes];
    std::atomic<bool> used{false};
  };
  boost::container::small_vector<slot, 2> slots_;
};

// The allocator a posted function object is bound to, drawing on a
// slot_buffer.
template <class T, std::size_t SlotBytes>
struct slot_allocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = slot_allocator<U, SlotBytes>;
  };

  explicit slot_allocator(slot_buffer<SlotBytes>* b) noexcept : buffer(b) {}
  template <class U>
  slot_allocator(const slot_allocator<U, SlotBytes>& other) noexcept  // NOLINT(google-explicit-constructor)
      : buffer(other.buffer) {}

  [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(buffer->allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* pointer, std::size_t) noexcept { buffer->deallocate(pointer, alignof(T)); }

  template <class U>
  friend bool operator==(const slot_allocator& a, const slot_allocator<U, SlotBytes>& b) noexcept {
    return a.buffer == b.buffer;
  }

  slot_buffer<SlotBytes>* buffer;
};

}  // namespace ferrum::async
