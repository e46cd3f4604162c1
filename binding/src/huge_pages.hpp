// huge_pages — big cold-path vectors backed by transparent huge pages.
//
// Compiling a million-node plan writes a few hundred MiB of fresh memory, and
// on virtual machines the cost of the compile is then mostly the kernel
// faulting in 4 KiB pages one at a time. Asking for transparent huge pages on
// the big vectors (madvise, honoured where THP is in "madvise" or "always"
// mode) cuts those faults by 512x; elsewhere the hint is ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ferrum::detail {

// Reserves room for `count` elements in `v` and, where that is at least 4 MiB,
// advises the kernel to back it with huge pages. Only a hint: it never fails.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t count) {
  v.reserve(count);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const std::size_t bytes = v.capacity() * sizeof(T);
  if (bytes < 2 * huge) return;
  // The advice applies to whole huge pages inside the allocation.
  const auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(v.data()) + bytes) & ~(huge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

}  // namespace ferrum::detail
