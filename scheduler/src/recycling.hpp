// recycling.hpp (private) — the memory a wave reuses so that, in steady
// state, it allocates nothing: frames of the wave coroutine, and posts whose
// memory comes from the wave's own buffer.
#pragma once

#include "ferrum/async/post_buffer.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/execution/allocator.hpp>
#include <boost/asio/execution/blocking.hpp>
#include <boost/asio/execution/execute.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/require.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

namespace ferrum::detail {

// Keeps freed blocks of one size (every wave runs the same coroutine, so its
// frames have one size) and hands them out again. Thread-safe.
class frame_pool {
 public:
  frame_pool() = default;
  frame_pool(const frame_pool&) = delete;
  frame_pool& operator=(const frame_pool&) = delete;
  ~frame_pool() {
    for (void* block : free_) ::operator delete(block);
  }

  // Makes `count` frames when the first is asked for (the size is known only
  // then), so that waves up to that many at once never allocate one.
  void reserve(std::size_t count) { reserve_ = count; }

  void* allocate(std::size_t bytes) {
    {
      const std::lock_guard lock(mutex_);
      if (size_ == 0) {
        size_ = bytes;
        free_.reserve(reserve_);
        while (free_.size() < reserve_) free_.push_back(::operator new(bytes));
      }
      if (bytes == size_ && !free_.empty()) {
        void* block = free_.back();
        free_.pop_back();
        return block;
      }
    }
    return ::operator new(bytes);
  }

  void deallocate(void* block, std::size_t bytes) noexcept {
    {
      const std::lock_guard lock(mutex_);
      // push_back allocates only when the pool reaches a new peak of frames.
      if (bytes == size_) {
        try {
          free_.push_back(block);
          return;
        } catch (const std::bad_alloc&) {
          // Not kept: freed below.
        }
      }
    }
    ::operator delete(block);
  }

 private:
  std::mutex mutex_;
  std::size_t size_ = 0;
  std::size_t reserve_ = 0;
  std::vector<void*> free_;
};

// Posts `f` to `executor` with its memory from `buffer`. Through an
// any_io_executor, Asio allocates the queued operation with the target
// executor's own allocator, which recycles only on Asio's threads; a device
// thread completing a fence is not one. For the executors engines use
// (io_context, thread_pool) the target is reached and given the buffer as its
// allocator, so the post allocates nothing from any thread.
template <std::size_t EntryBytes, class Function>
void post_with(const boost::asio::any_io_executor& executor, async::post_buffer<EntryBytes>& buffer, Function&& f) {
  namespace asio = boost::asio;
  const async::post_allocator<void, EntryBytes> allocator(&buffer);
  auto post_typed = [&](const auto& typed) {
    asio::execution::execute(
        asio::prefer(asio::require(typed, asio::execution::blocking.never), asio::execution::allocator(allocator)),
        std::forward<Function>(f));
  };
  if (const auto* io = executor.target<asio::io_context::executor_type>()) {
    post_typed(*io);
  } else if (const auto* pool = executor.target<asio::thread_pool::executor_type>()) {
    post_typed(*pool);
  } else {
    asio::post(executor, asio::bind_allocator(allocator, std::forward<Function>(f)));
  }
}

}  // namespace ferrum::detail
