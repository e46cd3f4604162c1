// tools/plan_picture.hpp — what `ferrum compile --graph` draws, as plain data:
// the plan's nodes and dependencies, and per bucket where barriers fall,
// each resource's users and lifetime, and which resources share bytes.
//
//   const ferrum::tools::plan_picture picture = ferrum::tools::make_plan_picture(*program, plan);
//   const ferrum::tools::graph_svg svg = ferrum::tools::draw_graph_svg(picture);  // graph_svg.hpp
//
// Made from a compiled program and the plan it came from, nothing else; the
// renderer (graph_svg.hpp) only reads it. Everything is in a stable order
// (nodes in plan order, resources in program order), so a plan always gives
// the same picture.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/plan.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ferrum::tools {

struct picture_node {
  std::string id;
  queue_kind queue = queue_kind::compute;
};

// Node `after` runs after node `before` (plan indices, before < after).
struct picture_dependency {
  std::size_t before = 0;
  std::size_t after = 0;
};

// A node listing a resource, and how it uses it.
struct picture_use {
  std::size_t node = 0;
  resource_access access = resource_access::read_write;
};

struct picture_resource {
  std::string id;
  // An image's format and extent in the bucket ("rgba16-float 320x180",
  // "rgba16-float 160x90 (bucket/2)" for a fraction of the bucket's);
  // empty for a buffer.
  std::string image;
  std::string pool;
  memory_class memory = memory_class::device;
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  // Its bytes in the bucket's lane ([offset, offset + size)); an imported
  // resource's lie in the imported window, past the lane's end.
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  // The nodes that list it, in plan order; its lifetime in a wave runs from
  // the first to the last of them.
  std::vector<picture_use> uses;

  [[nodiscard]] bool imported() const noexcept { return memory == memory_class::imported; }
  [[nodiscard]] bool persistent() const noexcept { return lifetime == allocation_lifetime::persistent; }
  // The first and last node that use it; meaningful only with uses.
  [[nodiscard]] std::size_t first_node() const noexcept { return uses.front().node; }
  [[nodiscard]] std::size_t last_node() const noexcept { return uses.back().node; }
};

// A layout transition the barrier a node opens with makes (lane_recipe::
// node_transitions): of resource `resource` (an index into
// bucket_picture::resources).
struct picture_transition {
  std::size_t resource = 0;
  image_layout from = image_layout::undefined;
  image_layout to = image_layout::undefined;
  subresource_range range{};  // the part of the image it changes
};

// Two resources of a bucket whose bytes in the lane overlap (indices into
// bucket_picture::resources, first < second).
struct picture_alias {
  std::size_t first = 0;
  std::size_t second = 0;
};

struct bucket_picture {
  std::string id;
  // Per node (plan order): whether its command list opens with a barrier
  // (lane_recipe::barrier_before).
  std::vector<bool> barrier_before;
  // Per node (plan order): its layout transitions, by image.
  std::vector<std::vector<picture_transition>> transitions;
  // Every resource of the plan, in program order (pool, then resource id).
  std::vector<picture_resource> resources;
  // Ascending by (first, second).
  std::vector<picture_alias> aliases;
};

struct plan_picture {
  std::vector<picture_node> nodes;  // plan order
  // The dependency graph's edges (a v1 plan's: the chain), by `after`, then
  // `before`.
  std::vector<picture_dependency> dependencies;
  std::vector<bucket_picture> buckets;  // id order
};

// The picture of `program`, compiled from `p`.
[[nodiscard]] plan_picture make_plan_picture(const compiled_program& program, const plan& p);

}  // namespace ferrum::tools
