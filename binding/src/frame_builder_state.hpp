// frame_builder_state — what a frame_builder holds between its calls: the
// passes, resources and buckets as declared, by index (frame_builder.hpp).
#pragma once

#include "ferrum/binding/frame_builder.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace ferrum {

struct frame_builder::state {
  // One access of a pass, in call order.
  struct use {
    std::uint32_t resource;  // index into resources
    resource_access how;
    subresource_range range;
  };
  struct pass {
    std::string name;
    queue_kind queue = queue_kind::compute;
    std::optional<std::uint32_t> parameters;  // its binding resource
    std::vector<use> uses;
    std::vector<std::uint32_t> after;  // explicit, in call order
  };
  // A buffer, an image or a pass's parameter block, in declaration order
  // (the plan's resource order).
  struct resource {
    std::string name;
    bool image = false;
    std::optional<std::uint32_t> owner;  // the pass of a parameter block
    buffer_info buffer;                  // its string_views empty: pool, contract below
    image_info picture;                  // its pool empty
    std::string pool;                    // override; empty: frame_pools
    std::string contract;                // override; empty: derived_contract
    std::optional<std::uint32_t> previous_of;
  };
  struct bucket {
    std::string cls;
    bucket_capacity dims;
    std::vector<std::pair<std::string, workspace_budget>> budgets;  // pool name, min/max
  };

  std::uint64_t serial = 0;
  frame_options options;
  std::vector<pass> passes;
  std::vector<resource> resources;
  std::vector<bucket> buckets;
  std::unordered_set<std::string> pass_names, resource_names;  // to refuse one twice
  std::optional<error> first_error;                            // the first bad call, which build() returns

  // The `after` of each pass (plan indices, ascending), derived from the
  // accesses and the explicit ones (frame_order.cpp); dependency_cycle or
  // dependency_not_earlier for an explicit one naming a later pass.
  [[nodiscard]] result<std::vector<std::vector<std::uint32_t>>> derive_after() const;
};

}  // namespace ferrum
