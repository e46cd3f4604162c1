// A plan with a raster node (tests of raster nodes: tests/scheduler/
// raster_nodes_test.cpp on the null device, tests/gpu/vulkan/
// vulkan_raster_test.cpp on lavapipe), for frames of raster_side x
// raster_side pixels (its one bucket: [32, 32, 1024]).
#pragma once

#include "test_namespace.hpp"

#include <cstdint>
#include <string>

namespace ferrum::test {

inline constexpr std::uint32_t raster_side = 32;

// node/draw copies the triangles' vertices from its slot into
// resource/vertices (device memory) with a ferrum copy, then draws them
// into image/color, depth-tested against image/depth; node/read copies
// image/color out. image/color's first use clears it and a later node
// reads it (store); image/depth is cleared and used once (not stored).
// The copy and the draw share a list: Debian 12's validation layers check
// hazards within a command buffer only, so the barrier between them is
// the one they can prove covers the vertex input.
inline constexpr const char* raster_plan = R"({
  "format": "ferrum.plan.v2",
  "nodes": [
    { "id": "node/draw", "resources": ["resource/vertices.in", "resource/vertices", "image/color", "image/depth"],
      "binding": "resource/vertices.in",
      "access": {"resource/vertices.in": "read", "resource/vertices": "read-write",
                 "image/color": "color-attachment", "image/depth": "depth-attachment"} },
    { "id": "node/read", "resources": ["image/color", "resource/out"], "after": ["node/draw"],
      "access": {"image/color": "transfer-src", "resource/out": "write"} }
  ],
  "resources": [
    { "id": "resource/vertices.in", "pool": "pool/bindings", "kind": "binding", "node": "node/draw",
      "demand": {"fixed": 96}, "alignment": 16, "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d"} },
    { "id": "resource/vertices", "pool": "pool/vertices", "kind": "workspace",
      "demand": {"fixed": 96}, "alignment": 16, "lifetime": "invocation", "usage": "storage", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d"} },
    { "id": "image/color", "pool": "pool/targets", "kind": "workspace", "lifetime": "invocation",
      "image": {"format": "rgba8-unorm", "extent": "bucket"} },
    { "id": "image/depth", "pool": "pool/targets", "kind": "workspace", "lifetime": "invocation",
      "image": {"format": "d32-float", "extent": "bucket"} },
    { "id": "resource/out", "pool": "pool/out", "kind": "workspace",
      "demand": {"base": 0, "per_unit": 4, "dimension": 2}, "alignment": 16, "lifetime": "persistent",
      "usage": "storage", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "c2a8e4f06b1d9c3a7e5f2b8d0c6a4e1f9b3d7c5a2e8f0b6d4c1a9e3f7b5d2c8a"} }
  ],
  "buckets": [
    { "class": "frame", "capacity": [32, 32, 1024],
      "budgets": [ {"pool": "pool/bindings", "min": 0, "max": 4096},
                   {"pool": "pool/targets", "min": 0, "max": 1048576},
                   {"pool": "pool/vertices", "min": 0, "max": 4096},
                   {"pool": "pool/out", "min": 0, "max": 1048576} ] }
  ],
  "pools": {"pool/out": {"memory": "readback"}},
  "lanes": 2,
  "budget_bytes": 16777216
})";

// raster_plan with image/color and image/depth the engine's (pool/targets
// imported): each wave names them (wave_request::images). Both are cleared
// by node/draw (their first use overwrites them) and both stored (the
// engine keeps them).
inline std::string imported_raster_plan() {
  std::string plan = raster_plan;
  const std::string pools = R"("pools": {"pool/out": {"memory": "readback"}})";
  plan.replace(plan.find(pools), pools.size(),
               R"("pools": {"pool/out": {"memory": "readback"}, "pool/targets": {"memory": "imported"}})");
  return plan;
}

// The shape of frame_loop's --overlay: the engine's image/frame written by
// node/copy (transfer-dst), drawn over by node/overlay (color-attachment:
// loaded, not cleared, as its first use was a write of another kind), then
// presented.
inline constexpr const char* overlay_plan = R"({
  "format": "ferrum.plan.v2",
  "nodes": [
    { "id": "node/copy", "resources": ["resource/copy.args", "image/frame"], "binding": "resource/copy.args",
      "access": {"resource/copy.args": "read", "image/frame": "transfer-dst"} },
    { "id": "node/overlay", "resources": ["image/frame"], "after": ["node/copy"],
      "access": {"image/frame": "color-attachment"} },
    { "id": "node/present", "resources": ["image/frame"], "after": ["node/overlay"],
      "access": {"image/frame": "present"} }
  ],
  "resources": [
    { "id": "resource/copy.args", "pool": "pool/bindings", "kind": "binding", "node": "node/copy",
      "demand": {"fixed": 16}, "alignment": 16, "lifetime": "invocation", "usage": "binding", "element": "u8",
      "storage": {"allocator": "linear-arena", "view": "contiguous", "contract": "5e1d9a3c7b2f0e8d4a6c1b9f3e7d2a5c8b0f4e6d1a3c9b7f2e5d8a0c4b6f1e3d"} },
    { "id": "image/frame", "pool": "pool/engine", "kind": "workspace", "lifetime": "invocation",
      "image": {"format": "rgba8-unorm", "extent": "bucket"} }
  ],
  "buckets": [
    { "class": "frame", "capacity": [32, 32, 1024],
      "budgets": [ {"pool": "pool/bindings", "min": 0, "max": 4096},
                   {"pool": "pool/engine", "min": 0, "max": 1048576} ] }
  ],
  "pools": {"pool/engine": {"memory": "imported"}},
  "lanes": 1,
  "budget_bytes": 16777216
})";

}  // namespace ferrum::test
