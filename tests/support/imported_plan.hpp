// A ferrum.plan.v2 plan over buffers of the engine's (pool/engine, memory
// class imported), for the binding and scheduler tests:
//
//   node/produce  binding slot (16 bytes); reads resource/lut (imported, 64
//                 bytes, read by every user), writes resource/mesh (imported,
//                 256 bytes) and resource/scratch (device, 128 bytes)
//   node/consume  after node/produce; binding slot; reads resource/mesh,
//                 writes resource/out (imported, 64 + 16 per unit of
//                 capacity dimension 0)
//
// Buckets step@1x1x1 and step@4x1x1; `lanes` lanes.
#pragma once

#include "plan_builder.hpp"

namespace ferrum::test {

inline ferrum::plan imported_plan(std::uint32_t lanes = 2) {
  using namespace ferrum;
  const auto imported = [](std::string_view id, resource_demand demand) {
    return workspace_resource(id, "pool/engine", demand, 16);
  };
  plan p =
      plan_builder()
          .binding_node("node/produce", "resource/produce-slot", 16)
          .binding_node("node/consume", "resource/consume-slot", 16)
          .resource(imported("resource/lut", resource_demand::fixed(64)))
          .resource(imported("resource/mesh", resource_demand::fixed(256)))
          .resource(imported("resource/out", resource_demand::scaled(64, 16, 0)))
          .resource(workspace_resource("resource/scratch", "pool/scratch", resource_demand::fixed(128), 16))
          .use(0, "resource/lut")
          .use(0, "resource/mesh")
          .use(0, "resource/scratch")
          .use(1, "resource/mesh")
          .use(1, "resource/out")
          .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 4096}, {"pool/engine", 0, 4096}, {"pool/scratch", 0, 4096}})
          .bucket("step", {4, 1, 1}, {{"pool/bindings", 0, 4096}, {"pool/engine", 0, 4096}, {"pool/scratch", 0, 4096}})
          .lanes(lanes)
          .build();
  p.format = plan_format::v2;
  p.nodes[0].access = {resource_access::read_write, resource_access::read, resource_access::write,
                       resource_access::write};
  p.nodes[1].after = {id<node_id>("node/produce")};
  p.nodes[1].access = {resource_access::read_write, resource_access::read, resource_access::write};
  p.pools.push_back({id<pool_id>("pool/engine"), liveness_mode::conservative, memory_class::imported});
  return p;
}

}  // namespace ferrum::test
