// bench_plan.hpp — the plans the benchmarks run: `nodes` nodes, each owning
// one binding resource of `slot_bytes`, in one bucket "step@1x1x1".
//
//   const ferrum::plan p = ferrum::bench::binding_plan(16, 3, 64);
#pragma once

#include "ferrum/binding/plan.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace ferrum::bench {

template <class Id>
Id make_id(const std::string& text) {
  return Id::make(text).value();
}

inline plan binding_plan(std::size_t nodes, std::uint32_t lanes, std::uint64_t slot_bytes) {
  plan p;
  p.lanes = lanes;
  p.budget_bytes = std::uint64_t{1} << 32;
  const std::string contract(64, 'c');
  const auto pool = make_id<pool_id>("pool/bindings");
  for (std::size_t i = 0; i < nodes; ++i) {
    const std::string n = std::to_string(i);
    plan_node node{make_id<node_id>("node/" + n), {}, std::nullopt};
    resource_descriptor r;
    r.id = make_id<resource_id>("res/" + n);
    r.pool = pool;
    r.kind = allocation_kind::binding;
    r.node = node.id;
    r.demand = resource_demand::fixed(slot_bytes);
    r.alignment = 16;
    r.lifetime = allocation_lifetime::invocation;
    r.usage = buffer_usage::binding;
    r.element = element_type::u8;
    r.storage = {storage_allocator::linear_arena, storage_view::contiguous, contract};
    node.resources.push_back(r.id);
    node.binding = r.id;
    p.nodes.push_back(std::move(node));
    p.resources.push_back(std::move(r));
  }
  bucket_spec b{make_id<bucket_class>("step"), {1, 1, 1}, {}};
  b.budgets.push_back({pool, 0, std::uint64_t{1} << 30});
  p.buckets.push_back(std::move(b));
  return p;
}

}  // namespace ferrum::bench
