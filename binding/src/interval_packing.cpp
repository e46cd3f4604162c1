// interval_packing.cpp — pack_interval (interval_packing.hpp): a sweep over
// the nodes with a best-fit free list.
#include "interval_packing.hpp"

#include "ferrum/binding/demand.hpp"

#include <algorithm>
#include <map>
#include <memory_resource>
#include <queue>
#include <set>

namespace ferrum::detail {
namespace {

// Free ranges of an interval arena, found by size (best fit) and by offset
// (coalescing). Every give and take inserts or erases tree nodes: they come
// from a pool of their own, which recycles them, not from malloc each time.
class free_ranges {
 public:
  // Takes `size` bytes at an `alignment` boundary from a free range; nullopt
  // when no free range fits.
  std::optional<std::uint64_t> take(std::uint64_t size, std::uint64_t alignment) {
    for (auto it = by_size_.lower_bound({size, 0}); it != by_size_.end(); ++it) {
      const auto [range_size, range_offset] = *it;
      const auto start = checked_align_up(range_offset, alignment);
      if (!start || *start - range_offset > range_size - size) continue;
      erase(range_offset);
      give(range_offset, *start - range_offset);
      give(*start + size, range_offset + range_size - (*start + size));
      return start;
    }
    return std::nullopt;
  }

  // Returns [offset, offset + size) and merges it with its free neighbours.
  void give(std::uint64_t offset, std::uint64_t size) {
    if (size == 0) return;
    auto next = by_offset_.lower_bound(offset);
    if (next != by_offset_.end() && offset + size == next->first) {
      size += next->second;
      erase(next->first);
    }
    auto prev = by_offset_.lower_bound(offset);
    if (prev != by_offset_.begin()) {
      --prev;
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        erase(offset);
      }
    }
    by_offset_.emplace(offset, size);
    by_size_.emplace(size, offset);
  }

  // The free range that ends at `top`, if any: growing the arena can start there.
  std::optional<std::uint64_t> tail_start(std::uint64_t top) const {
    if (by_offset_.empty()) return std::nullopt;
    const auto& [offset, size] = *by_offset_.rbegin();
    if (offset + size != top) return std::nullopt;
    return offset;
  }

  void erase(std::uint64_t offset) {
    auto it = by_offset_.find(offset);
    by_size_.erase({it->second, it->first});
    by_offset_.erase(it);
  }

 private:
  std::pmr::unsynchronized_pool_resource nodes_;  // before the trees: outlives them
  std::pmr::map<std::uint64_t, std::uint64_t> by_offset_{&nodes_};
  std::pmr::set<std::pair<std::uint64_t, std::uint64_t>> by_size_{&nodes_};
};

}  // namespace

std::optional<std::uint64_t> pack_interval(std::vector<projection>& projections,
                                           std::span<const live_interval> intervals) {
  std::vector<std::size_t> order(projections.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (intervals[a].first != intervals[b].first) return intervals[a].first < intervals[b].first;
    return projections[a].alignment > projections[b].alignment;
  });

  using ending = std::pair<std::size_t, std::size_t>;  // (last node, member)
  std::priority_queue<ending, std::vector<ending>, std::greater<>> live;
  free_ranges free;
  std::uint64_t top = 0;
  for (std::size_t i : order) {
    while (!live.empty() && live.top().first < intervals[i].first) {
      const projection& done = projections[live.top().second];
      free.give(done.offset, done.capacity);
      live.pop();
    }
    projection& p = projections[i];
    auto offset = free.take(p.capacity, p.alignment);
    if (!offset) {
      std::uint64_t base = top;
      if (auto tail = free.tail_start(top)) {
        free.erase(*tail);
        base = *tail;
      }
      const auto start = checked_align_up(base, p.alignment);
      const auto end = start ? checked_add(*start, p.capacity) : std::nullopt;
      if (!end) return std::nullopt;
      free.give(base, *start - base);
      top = *end;
      offset = start;
    }
    p.offset = *offset;
    live.emplace(intervals[i].last, i);
  }
  return top;
}

}  // namespace ferrum::detail
