// The global operator new and delete of the `ferrum` binary: malloc and free
// plus a count, for `ferrum run`'s allocations_per_wave. Every form is
// replaced, so that no pointer from one family reaches the other's delete.
#include "allocation_counter.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

// Relaxed: a statistic, read when the run's waves are done.
std::atomic<std::uint64_t> allocations{0};

void* counted_alloc(std::size_t bytes, std::size_t alignment) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (bytes == 0) bytes = 1;
  if (alignment <= alignof(std::max_align_t)) return std::malloc(bytes);
  // aligned_alloc wants a size that is a multiple of the alignment.
  return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
}

void* counted_alloc_or_throw(std::size_t bytes, std::size_t alignment) {
  if (void* p = counted_alloc(bytes, alignment)) return p;
  throw std::bad_alloc();
}

constexpr std::size_t plain = alignof(std::max_align_t);

}  // namespace

namespace ferrum::tools {

std::uint64_t allocations_so_far() noexcept { return allocations.load(std::memory_order_relaxed); }

}  // namespace ferrum::tools

void* operator new(std::size_t bytes) { return counted_alloc_or_throw(bytes, plain); }
void* operator new[](std::size_t bytes) { return counted_alloc_or_throw(bytes, plain); }
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  return counted_alloc_or_throw(bytes, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t bytes, std::align_val_t alignment) {
  return counted_alloc_or_throw(bytes, static_cast<std::size_t>(alignment));
}
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return counted_alloc(bytes, plain); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return counted_alloc(bytes, plain); }
void* operator new(std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_alloc(bytes, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_alloc(bytes, static_cast<std::size_t>(alignment));
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
