// ferrum/async/post_buffer.hpp — the memory of the function objects an
// asynchronous operation posts, kept inside the operation so that completing
// it allocates nothing.
//
//   ferrum::async::post_buffer<192> buffer;              // two entries
//   asio::post(executor, asio::bind_allocator(ferrum::async::post_allocator<void, 192>(&buffer), f));
//
// A completion is often posted from a device's thread, which has no Asio
// recycling cache: without a buffer of its own, each post would allocate.
// Every entry has `EntryBytes` bytes; a request that is larger, more aligned
// than std::max_align_t, or finds every entry taken falls back to operator
// new. Allocation and deallocation may happen on different threads.
//
// The entries live in a boost::container::small_vector: an operation's two
// are inline (no allocation when the operation is made), a wave's one per
// encoder task plus a few are allocated once, when the wave is made.
#pragma once

#include <boost/container/small_vector.hpp>

#include <atomic>
#include <cstddef>
#include <new>

namespace ferrum::async {

template <std::size_t EntryBytes>
class post_buffer {
 public:
  explicit post_buffer(std::size_t entries = 2) : entries_(entries) {}
  post_buffer(const post_buffer&) = delete;
  post_buffer& operator=(const post_buffer&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment) {
    if (bytes <= EntryBytes && alignment <= alignof(std::max_align_t)) {
      for (entry& e : entries_) {
        if (!e.used.exchange(true, std::memory_order_acquire)) return e.bytes;
      }
    }
    return ::operator new(bytes, std::align_val_t(alignment));
  }

  void deallocate(void* pointer, std::size_t alignment) noexcept {
    for (entry& e : entries_) {
      if (pointer == e.bytes) {
        e.used.store(false, std::memory_order_release);
        return;
      }
    }
    ::operator delete(pointer, std::align_val_t(alignment));
  }

 private:
  struct entry {
    entry() noexcept = default;
    // Entries are made with the buffer and never moved while in use; the
    // container asks for moves only to compile its growth path, which a
    // buffer sized once never takes. A "moved" entry is a fresh, free one.
    entry(entry&&) noexcept {}
    entry& operator=(entry&&) noexcept { return *this; }

    alignas(std::max_align_t) unsigned char bytes[EntryBytes];
    std::atomic<bool> used{false};
  };
  boost::container::small_vector<entry, 2> entries_;
};

// The allocator a posted function object is bound to, drawing on a
// post_buffer.
template <class T, std::size_t EntryBytes>
struct post_allocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = post_allocator<U, EntryBytes>;
  };

  explicit post_allocator(post_buffer<EntryBytes>* b) noexcept : buffer(b) {}
  template <class U>
  post_allocator(const post_allocator<U, EntryBytes>& other) noexcept  // NOLINT(google-explicit-constructor)
      : buffer(other.buffer) {}

  [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(buffer->allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* pointer, std::size_t) noexcept { buffer->deallocate(pointer, alignof(T)); }

  template <class U>
  friend bool operator==(const post_allocator& a, const post_allocator<U, EntryBytes>& b) noexcept {
    return a.buffer == b.buffer;
  }

  post_buffer<EntryBytes>* buffer;
};

}  // namespace ferrum::async
