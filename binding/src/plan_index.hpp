// plan_index — the plan's ids, indexed once per compile.
//
// Every stage needs to find nodes and resources by id, and several need the
// resources in id order. Building that once (compact id tables for lookups,
// references resolved to indices, one sort of the resources) instead of once
// per stage is what keeps compiling a million nodes within the cold-path
// budget: touching strings scattered over the plan is cache-miss bound.
#pragma once

#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/program_binding.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ferrum::detail {

// A set of the ids of one vector (nodes or resources), for lookup by id: open
// addressing over slots that hold an element's index + 1 (0: empty). A slot
// is one index, not a (key, value) pair, so a million ids take 16 MiB; the
// key is the element's own id, compared on a probe hit.
class id_table {
 public:
  id_table() = default;

  // Indexes `ids(i)` for i < count; `first_duplicate` receives (earlier,
  // later) for the first id met twice.
  template <class Ids>
  id_table(std::size_t count, Ids ids, std::optional<std::pair<std::size_t, std::size_t>>& first_duplicate);

  // The index of the element with id `id`, or none.
  template <class Ids>
  [[nodiscard]] std::optional<std::size_t> find(std::string_view id, Ids ids) const noexcept {
    for (std::size_t slot = hash(id) & mask_;; slot = (slot + 1) & mask_) {
      const std::size_t entry = slots_[slot];
      if (entry == 0) return std::nullopt;
      if (ids(entry - 1) == id) return entry - 1;
    }
  }

 private:
  static std::size_t hash(std::string_view id) noexcept { return std::hash<std::string_view>{}(id); }

  std::size_t mask_ = 0;
  std::vector<std::size_t> slots_;
};

template <class Ids>
id_table::id_table(std::size_t count, Ids ids, std::optional<std::pair<std::size_t, std::size_t>>& first_duplicate) {
  std::size_t size = 16;
  while (size < 2 * count) size *= 2;
  mask_ = size - 1;
  slots_.assign(size, 0);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view id = ids(i);
    std::size_t slot = hash(id) & mask_;
    for (; slots_[slot] != 0; slot = (slot + 1) & mask_)
      if (ids(slots_[slot] - 1) == id) break;
    if (slots_[slot] != 0) {
      if (!first_duplicate) first_duplicate = std::pair<std::size_t, std::size_t>(slots_[slot] - 1, i);
      continue;
    }
    slots_[slot] = i + 1;
  }
}

class plan_index {
 public:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  explicit plan_index(const plan& p);

  // References, resolved once: the resource index of each of node `n`'s uses
  // and of its binding, and the node index of resource `r`'s owner; `none`
  // where the id is absent or names nothing.
  [[nodiscard]] std::span<const std::size_t> uses(std::size_t n) const noexcept {
    return std::span(uses_).subspan(use_begin_[n], use_begin_[n + 1] - use_begin_[n]);
  }
  [[nodiscard]] std::size_t binding(std::size_t n) const noexcept { return binding_[n]; }
  [[nodiscard]] std::size_t owner(std::size_t r) const noexcept { return owner_[r]; }
  // Every node's uses side by side, in plan order.
  [[nodiscard]] std::span<const std::size_t> all_uses() const noexcept { return uses_; }

  // The plan index of the node or resource with this id (the first one, if
  // the id is duplicated).
  [[nodiscard]] std::optional<std::size_t> node(std::string_view id) const noexcept {
    return nodes_.find(id, node_ids{plan_});
  }
  [[nodiscard]] std::optional<std::size_t> resource(std::string_view id) const noexcept {
    return resources_.find(id, resource_ids{plan_});
  }

  // Resource indices in id order (duplicates adjacent, in plan order).
  [[nodiscard]] const std::vector<std::size_t>& resources_by_id() const noexcept { return resources_by_id_; }

  // The first duplicated id found, as (earlier index, later index).
  [[nodiscard]] const std::optional<std::pair<std::size_t, std::size_t>>& duplicate_node() const noexcept {
    return duplicate_node_;
  }
  [[nodiscard]] const std::optional<std::pair<std::size_t, std::size_t>>& duplicate_resource() const noexcept {
    return duplicate_resource_;
  }

 private:
  struct node_ids {
    const plan* p;
    std::string_view operator()(std::size_t i) const noexcept { return p->nodes[i].id.view(); }
  };
  struct resource_ids {
    const plan* p;
    std::string_view operator()(std::size_t i) const noexcept { return p->resources[i].id.view(); }
  };

  const plan* plan_;
  std::optional<std::pair<std::size_t, std::size_t>> duplicate_node_;
  std::optional<std::pair<std::size_t, std::size_t>> duplicate_resource_;
  id_table nodes_;
  id_table resources_;
  std::vector<std::size_t> use_begin_;
  std::vector<std::size_t> uses_;
  std::vector<std::size_t> binding_;
  std::vector<std::size_t> owner_;
  std::vector<std::size_t> resources_by_id_;
};

// The indices 0..keys.size()-1 in order of their keys, ties in index order.
// Sorts 8 bytes of each key that follow the prefix all keys share, held
// beside the index, so that most comparisons touch no string at all.
[[nodiscard]] std::vector<std::size_t> order_by_key(const std::vector<std::string_view>& keys);

// The stages of compile, sharing one index; the public functions of the same
// names build their own.
// validate_plan also hands over the dependency graph it compiled, where
// `graph` is not null.
[[nodiscard]] result<void> validate_plan(const plan& p, const plan_index& index, dependency_graph* graph);
[[nodiscard]] result<plan_hash> hash_plan(const plan& p, const plan_index& index);
[[nodiscard]] result<std::vector<pool_domain>> derive_pool_domains(const plan& p, const plan_index& index);
[[nodiscard]] std::vector<live_interval> live_intervals(const plan& p, const plan_index& index);
[[nodiscard]] result<std::map<bucket_id, program_binding_layout>> compile_program_binding_layouts(
    const plan& p, const plan_hash& hash, const std::vector<pool_domain>& domains,
    const std::vector<std::optional<wave_domain_layout>>& layouts, const bucket_capacity_layouts& capacities,
    const plan_index& index);

}  // namespace ferrum::detail
