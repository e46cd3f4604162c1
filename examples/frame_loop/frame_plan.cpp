// examples/frame_loop/frame_plan.cpp — a frame_loop plan made for one frame
// size (frame_plan.hpp).
#include "frame_plan.hpp"

#include "ferrum/binding/demand.hpp"

#include <algorithm>
#include <map>

namespace frame_loop {
namespace {

// The window's image, written by node/output's copy and presented by
// node/present: the wave's own for the frame, named by each wave. With
// `overlay`, node/overlay draws over it between the two, its color
// attachment.
void add_present(ferrum::plan& p, ferrum::image_format format, bool overlay) {
  const auto present = ferrum::resource_id::make("image/present").value();
  const auto pool = ferrum::pool_id::make("pool/swapchain").value();
  ferrum::resource_descriptor image;
  image.id = present;
  image.pool = pool;
  image.image.emplace();
  image.image->format = format;
  image.image->bucket_extent = true;
  p.resources.push_back(std::move(image));
  p.pools.push_back({pool, ferrum::liveness_mode::conservative, ferrum::memory_class::imported});

  ferrum::plan_node& output = p.nodes.back();
  output.resources.push_back(present);
  output.access.push_back(ferrum::resource_access::transfer_dst);
  const auto add_node = [&](std::string_view id, ferrum::resource_access access) {
    ferrum::plan_node n;
    n.id = ferrum::node_id::make(id).value();
    n.resources = {present};
    n.after = {p.nodes.back().id};
    n.access = {access};
    p.nodes.push_back(std::move(n));
  };
  if (overlay) add_node("node/overlay", ferrum::resource_access::color_attachment);
  add_node("node/present", ferrum::resource_access::present);
}

// node/draw on a device that records no graphics (the null device): its
// own rasterizer draws the torus over the pattern as a kernel, a storage
// read-write of image/frame.hdr, and the depth as another, a storage write
// of image/frame.depth made r32-float (a storage image; d32-float is none).
// The mesh is the kernels' own: resource/mesh, the engine's vertex buffer,
// goes with its pool.
void draw_by_kernel(ferrum::plan& p) {
  const auto draw =
      std::ranges::find_if(p.nodes, [](const ferrum::plan_node& n) { return n.id.view() == "node/draw"; });
  if (draw == p.nodes.end()) return;
  for (std::size_t i = draw->resources.size(); i-- > 0;) {
    const std::string_view id = draw->resources[i].view();
    if (id == "resource/mesh") {
      draw->resources.erase(draw->resources.begin() + static_cast<std::ptrdiff_t>(i));
      draw->access.erase(draw->access.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (id == "image/frame.hdr") {
      draw->access[i] = ferrum::resource_access::storage_read_write;
    } else if (id == "image/frame.depth") {
      draw->access[i] = ferrum::resource_access::storage_write;
    }
  }
  for (ferrum::resource_descriptor& r : p.resources)
    if (r.id.view() == "image/frame.depth" && r.image) r.image->format = ferrum::image_format::r32_float;
  std::erase_if(p.resources, [](const ferrum::resource_descriptor& r) { return r.id.view() == "resource/mesh"; });
  std::erase_if(p.pools, [](const ferrum::pool_option& o) { return o.pool.view() == "pool/engine"; });
}

}  // namespace

ferrum::plan plan_for_size(const ferrum::plan& base, image_size size, std::optional<ferrum::image_format> present,
                           bool raster, bool overlay) {
  ferrum::plan p = base;
  if (!raster) draw_by_kernel(p);
  if (present) add_present(p, *present, overlay);
  const ferrum::bucket_capacity dims{size.width, size.height, std::uint64_t{size.width} * size.height};
  // Every resource of a pool side by side, each padded to its alignment.
  std::map<std::string, std::uint64_t> pool_bytes;
  std::uint64_t lane_bytes = 0;
  for (const ferrum::resource_descriptor& r : p.resources) {
    const std::uint64_t bytes = ferrum::resolve_demand(r, dims).value();
    pool_bytes[std::string(r.pool.view())] += bytes + r.alignment;
    lane_bytes += bytes + r.alignment;
  }
  // The plan's budget holds every lane at that size (4K frames need more
  // than frame_loop.json's 256 MiB).
  p.budget_bytes = std::max(p.budget_bytes, lane_bytes * p.lanes);
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
