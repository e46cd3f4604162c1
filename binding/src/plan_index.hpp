// plan_index — the plan's ids, indexed once per compile.
//
// Every stage needs to find nodes and resources by id, and several need the
// resources in id order. Building that once (hash maps for lookups, one sort
// of the resources) instead of once per stage is what keeps compiling a
// million nodes within the cold-path budget: sorting strings scattered over
// the plan is cache-miss bound, so the stages share one sort.
#pragma once

#include "ferrum/binding/program_binding.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ferrum::detail {

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

  // The plan index of the node or resource with this id (the first one, if
  // the id is duplicated).
  [[nodiscard]] std::optional<std::size_t> node(std::string_view id) const noexcept { return find(nodes_, id); }
  [[nodiscard]] std::optional<std::size_t> resource(std::string_view id) const noexcept {
    return find(resources_, id);
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
  using map = boost::unordered_flat_map<std::string_view, std::size_t, std::hash<std::string_view>>;

  static std::optional<std::size_t> find(const map& m, std::string_view id) noexcept {
    auto it = m.find(id);
    if (it == m.end()) return std::nullopt;
    return it->second;
  }

  map nodes_;
  map resources_;
  std::vector<std::size_t> use_begin_;
  std::vector<std::size_t> uses_;
  std::vector<std::size_t> binding_;
  std::vector<std::size_t> owner_;
  std::vector<std::size_t> resources_by_id_;
  std::optional<std::pair<std::size_t, std::size_t>> duplicate_node_;
  std::optional<std::pair<std::size_t, std::size_t>> duplicate_resource_;
};

// The indices 0..keys.size()-1 in order of their keys, ties in index order.
// Sorts 8 bytes of each key that follow the prefix all keys share, held
// beside the index, so that most comparisons touch no string at all.
[[nodiscard]] std::vector<std::size_t> order_by_key(const std::vector<std::string_view>& keys);

// The stages of compile, sharing one index; the public functions of the same
// names build their own.
[[nodiscard]] result<void> validate_plan(const plan& p, const plan_index& index);
[[nodiscard]] result<plan_hash> hash_plan(const plan& p, const plan_index& index);
[[nodiscard]] result<std::vector<pool_domain>> derive_pool_domains(const plan& p, const plan_index& index);
[[nodiscard]] std::vector<live_interval> live_intervals(const plan& p, const plan_index& index);
[[nodiscard]] result<std::map<bucket_id, program_binding_layout>> compile_program_binding_layouts(
    const plan& p, const plan_hash& hash, const std::vector<pool_domain>& domains,
    const std::vector<std::optional<wave_domain_layout>>& layouts, const bucket_capacity_layouts& capacities,
    const plan_index& index);

}  // namespace ferrum::detail
