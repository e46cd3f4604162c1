// A ferrum.plan.v2 plan of images that only copies reach, for the
// scheduler tests of images in lanes (one 16x8 bucket, frame@16x8x1):
//
//   node/fill.a  copies texels from resource/in (upload) into image/a and
//                image/history (transfer-dst)
//   node/read.a  copies image/a out into resource/out (readback)
//   node/fill.b  copies texels into image/b (transfer-dst)
//   node/read.b  copies image/b and image/history out (transfer-src)
//
// Each a binding node, after the one before. image/a and image/b (r32-float,
// pool/targets, interval) are never live together; image/history
// (rgba8-unorm, pool/history) is persistent.
#pragma once

#include "plan_builder.hpp"

namespace ferrum::test {

inline constexpr std::uint32_t image_width = 16;
inline constexpr std::uint32_t image_height = 8;
// Each image's texels: r32-float and rgba8-unorm alike.
inline constexpr std::size_t image_bytes = std::size_t{image_width} * image_height * 4;

// fill.a copies texels into image/a and image/history; read.a copies a
// out; fill.b copies texels into image/b, which shares a's memory; read.b
// copies b and the history out. A chain of `after`s orders them; a and b
// are an interval pool's, never live together.
inline ferrum::plan image_copy_plan(std::uint32_t lanes) {
  using namespace ferrum;
  const auto image = [](std::string_view resource, std::string_view pool, image_format f, allocation_lifetime l) {
    resource_descriptor r;
    r.id = id<resource_id>(resource);
    r.pool = id<pool_id>(pool);
    r.lifetime = l;
    r.image = image_desc{f, true};
    return r;
  };
  plan p =
      plan_builder()
          .binding_node("node/fill.a", "resource/fill.a.args", 16)
          .binding_node("node/read.a", "resource/read.a.args", 16)
          .binding_node("node/fill.b", "resource/fill.b.args", 16)
          .binding_node("node/read.b", "resource/read.b.args", 16)
          .resource(workspace_resource("resource/in", "pool/input", resource_demand::fixed(3 * image_bytes), 16))
          .resource(workspace_resource("resource/out", "pool/output", resource_demand::fixed(3 * image_bytes), 16))
          .resource(image("image/a", "pool/targets", image_format::r32_float, allocation_lifetime::invocation))
          .resource(image("image/b", "pool/targets", image_format::r32_float, allocation_lifetime::invocation))
          .resource(image("image/history", "pool/history", image_format::rgba8_unorm, allocation_lifetime::persistent))
          .use(0, "resource/in")
          .use(0, "image/a")
          .use(0, "image/history")
          .use(1, "image/a")
          .use(1, "resource/out")
          .use(2, "resource/in")
          .use(2, "image/b")
          .use(3, "image/b")
          .use(3, "image/history")
          .use(3, "resource/out")
          .bucket("frame", {image_width, image_height, 1},
                  {{"pool/bindings", 0, 4096},
                   {"pool/history", 0, 1 << 20},
                   {"pool/input", 0, 1 << 20},
                   {"pool/output", 0, 1 << 20},
                   {"pool/targets", 0, 1 << 20}})
          .interval("pool/targets")
          .lanes(lanes)
          .build();
  p.format = plan_format::v2;
  using enum resource_access;
  p.nodes[0].access = {read, read, transfer_dst, transfer_dst};
  p.nodes[1].access = {read, transfer_src, write};
  p.nodes[2].access = {read, read, transfer_dst};
  p.nodes[3].access = {read, transfer_src, transfer_src, write};
  for (std::size_t n = 1; n < 4; ++n) p.nodes[n].after = {p.nodes[n - 1].id};
  p.pools.push_back({id<pool_id>("pool/input"), liveness_mode::conservative, memory_class::upload});
  p.pools.push_back({id<pool_id>("pool/output"), liveness_mode::conservative, memory_class::readback});
  return p;
}

}  // namespace ferrum::test
