// examples/frame_loop/frame_plan.cpp — a frame_loop plan made for one frame
// size (frame_plan.hpp).
#include "frame_plan.hpp"

#include "ferrum/binding/demand.hpp"

#include <algorithm>
#include <map>

namespace frame_loop {

ferrum::plan plan_for_size(const ferrum::plan& base, image_size size) {
  ferrum::plan p = base;
  const ferrum::bucket_capacity dims{std::uint64_t{size.width} * size.height, 1, 1};
  // Every resource of a pool side by side, each padded to its alignment.
  std::map<std::string, std::uint64_t> pool_bytes;
  for (const ferrum::resource_descriptor& r : p.resources) {
    const std::uint64_t bytes = ferrum::resolve_demand(r, dims).value();
    pool_bytes[std::string(r.pool.view())] += bytes + r.alignment;
  }
  std::erase_if(p.buckets, [](const ferrum::bucket_spec& b) { return b.cls.view() == "frame"; });
  ferrum::bucket_spec bucket;
  bucket.cls = ferrum::bucket_class::make("frame").value();
  bucket.dims = dims;
  for (const auto& [pool, bytes] : pool_bytes)
    bucket.budgets.push_back({ferrum::pool_id::make(pool).value(), 0, bytes});
  p.buckets.push_back(std::move(bucket));
  return p;
}

}  // namespace frame_loop
