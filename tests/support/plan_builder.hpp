// plan_builder.hpp — builds plans in test code, with the original module's defaults:
// binding resources are u8 / binding / invocation / contiguous, alignment 16.
//
//   auto p = ferrum::test::plan_builder()
//                .binding_node("node/a", "resource/a", 64)
//                .binding_node("node/b", "resource/b", 128)
//                .bucket("step", {1, 1, 1}, {{"pool/bindings", 0, 192}})
//                .build();
#pragma once

#include "test_namespace.hpp"

#include "ferrum/binding/compiled_program.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace ferrum::test {

inline const std::string contract_a(64, 'a');
inline const std::string contract_b(64, 'b');

template <class Id>
Id id(std::string_view text) {
  auto made = Id::make(text);
  REQUIRE(made.has_value());
  return *made;
}

inline resource_descriptor binding_resource(std::string_view resource, std::string_view node, std::uint64_t bytes,
                                            std::uint64_t alignment = 16, std::string_view pool = "pool/bindings") {
  resource_descriptor r;
  r.id = id<resource_id>(resource);
  r.pool = id<pool_id>(pool);
  r.kind = allocation_kind::binding;
  r.node = id<node_id>(node);
  r.demand = resource_demand::fixed(bytes);
  r.alignment = alignment;
  r.lifetime = allocation_lifetime::invocation;
  r.usage = buffer_usage::binding;
  r.element = element_type::u8;
  r.storage = {storage_allocator::linear_arena, storage_view::contiguous, contract_a};
  return r;
}

inline resource_descriptor workspace_resource(std::string_view resource, std::string_view pool, resource_demand demand,
                                              std::uint64_t alignment = 256) {
  resource_descriptor r;
  r.id = id<resource_id>(resource);
  r.pool = id<pool_id>(pool);
  r.kind = allocation_kind::workspace;
  r.demand = demand;
  r.alignment = alignment;
  r.lifetime = allocation_lifetime::invocation;
  r.usage = buffer_usage::storage;
  r.element = element_type::f32;
  r.storage = {storage_allocator::linear_arena, storage_view::contiguous, contract_b};
  return r;
}

struct budget_row {
  std::string_view pool;
  std::uint64_t min;
  std::uint64_t max;
};

class plan_builder {
 public:
  // A node owning a binding resource of `bytes` fixed bytes.
  plan_builder& binding_node(std::string_view node, std::string_view resource, std::uint64_t bytes,
                             std::uint64_t alignment = 16) {
    plan_.resources.push_back(binding_resource(resource, node, bytes, alignment));
    plan_node n{id<node_id>(node), {id<resource_id>(resource)}, id<resource_id>(resource)};
    plan_.nodes.push_back(std::move(n));
    return *this;
  }

  // A node with no binding, using the given resources.
  plan_builder& node(std::string_view node, std::vector<std::string_view> uses) {
    plan_node n{id<node_id>(node), {}, std::nullopt};
    for (auto r : uses) n.resources.push_back(id<resource_id>(r));
    plan_.nodes.push_back(std::move(n));
    return *this;
  }

  // Adds `resource` to the uses of the node at `node_index`.
  plan_builder& use(std::size_t node_index, std::string_view resource) {
    plan_.nodes.at(node_index).resources.push_back(id<resource_id>(resource));
    return *this;
  }

  plan_builder& resource(resource_descriptor r) {
    plan_.resources.push_back(std::move(r));
    return *this;
  }

  plan_builder& bucket(std::string_view cls, bucket_capacity dims, std::vector<budget_row> budgets) {
    bucket_spec b{id<bucket_class>(cls), dims, {}};
    for (const auto& row : budgets) b.budgets.push_back({id<pool_id>(row.pool), row.min, row.max});
    plan_.buckets.push_back(std::move(b));
    return *this;
  }

  plan_builder& interval(std::string_view pool) {
    plan_.pools.push_back({id<pool_id>(pool), liveness_mode::interval});
    return *this;
  }

  plan_builder& lanes(std::uint32_t n) {
    plan_.lanes = n;
    return *this;
  }

  plan_builder& budget(std::uint64_t bytes) {
    plan_.budget_bytes = bytes;
    return *this;
  }

  [[nodiscard]] plan build() const { return plan_; }

 private:
  plan plan_ = [] {
    plan p;
    p.lanes = 1;
    p.budget_bytes = std::uint64_t{1} << 20;
    return p;
  }();
};

// The original module's two-node plan: node/program-binding-{first,second} owning 64 and
// 128 bytes, alignment 16, one bucket test.program-binding@1x1x1 of budget
// [0, 192].
inline plan two_node_plan() {
  return plan_builder()
      .binding_node("node/program-binding-first", "resource/program-binding-first", 64)
      .binding_node("node/program-binding-second", "resource/program-binding-second", 128)
      .bucket("test.program-binding", {1, 1, 1}, {{"pool/bindings", 0, 192}})
      .build();
}

// Compiles `p`, requiring success.
inline compiled_program compile_ok(const plan& p) {
  auto program = compile(p);
  if (!program) FAIL(program.error().what());
  return std::move(*program);
}

// The code of an error.
inline errc code_of(const error& e) { return static_cast<errc>(e.code.value()); }

// The code of a failed result, requiring failure.
template <class T>
errc code_of(const result<T>& r) {
  REQUIRE_FALSE(r.has_value());
  return code_of(r.error());
}

}  // namespace ferrum::test

namespace Catch {
template <>
struct StringMaker<ferrum::errc> {
  static std::string convert(ferrum::errc code) { return std::string(ferrum::errc_name(code)); }
};
}  // namespace Catch
