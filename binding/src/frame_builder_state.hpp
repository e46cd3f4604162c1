// frame_builder_state — what a frame_builder holds between its calls: the
// passes, resources and buckets as declared, by index (frame_builder.hpp),
// and the storage reset() keeps so that the same declarations again, and
// hash(), allocate nothing.
#pragma once

#include "ferrum/binding/frame_builder.hpp"

#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/unordered/unordered_flat_set.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferrum {
namespace detail {

// derived_contract's digest, made once per process: a view of a table that
// lives as long as the process ("" where OpenSSL failed).
[[nodiscard]] std::string_view derived_contract_digest(buffer_usage usage, element_type element);

}  // namespace detail

// A vector whose clear() keeps its elements, for the next add() to reuse
// (their strings' and vectors' storage with them): what reset() forgets.
template <class T>
class kept_vector {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return live_; }
  [[nodiscard]] bool empty() const noexcept { return live_ == 0; }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return items_[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return items_[i]; }
  [[nodiscard]] T* begin() noexcept { return items_.data(); }
  [[nodiscard]] T* end() noexcept { return items_.data() + live_; }
  [[nodiscard]] const T* begin() const noexcept { return items_.data(); }
  [[nodiscard]] const T* end() const noexcept { return items_.data() + live_; }

  // One more element: a kept one, which `clear` empties, else a new one.
  template <class Clear>
  T& add(Clear clear) {
    if (live_ < items_.size()) {
      T& kept = items_[live_++];
      clear(kept);
      return kept;
    }
    ++live_;
    return items_.emplace_back();
  }
  void clear() noexcept { live_ = 0; }

 private:
  std::vector<T> items_;
  std::size_t live_ = 0;
};

// The `after` of each pass, derived (frame_order.cpp), and the storage its
// derivation works in, kept from one derivation to the next.
struct frame_order {
  // Pass i runs after edges[offsets[i]] .. edges[offsets[i + 1] - 1]
  // (plan indices, ascending).
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> edges;

  [[nodiscard]] std::span<const std::uint32_t> after(std::size_t i) const noexcept {
    return {edges.data() + offsets[i], edges.data() + offsets[i + 1]};
  }

  // Working storage: each resource's earlier uses as a list through `uses`
  // (`head`, -1: none), the passes each one runs after (a bit each, `words`
  // per pass), one pass's candidates.
  struct earlier_use {
    std::uint32_t pass;
    queue_kind queue;
    resource_access how;
    std::uint32_t mip, mip_end, layer, layer_end;
    std::int64_t next;
  };
  std::vector<std::int64_t> head;
  std::vector<earlier_use> uses;
  std::vector<std::uint64_t> reach;
  std::size_t words = 0;
  std::vector<std::uint32_t> deps;
};

// The pools a frame's resources go to (frame_builder::state::assign_pools).
struct frame_pool_set {
  struct pool {
    std::string_view name;  // a view of the options' name, or of a resource's override
    liveness_mode liveness = liveness_mode::conservative;
    std::optional<memory_class> memory;
    std::uint32_t first = 0;  // the first resource in it
    bool binding = false;     // whether it holds a parameter block
  };
  std::vector<std::uint32_t> of;  // per resource: its pool, an index into `pools`
  std::vector<pool> pools;        // in id order

  // The pool named `name`, or nullptr.
  [[nodiscard]] const pool* find(std::string_view name) const noexcept;

  // Working storage: the pools by name, and those of the options by the
  // address of their name.
  boost::unordered_flat_map<std::string_view, std::uint32_t> index;
  std::vector<std::pair<const char*, std::uint32_t>> by_address;
  std::vector<std::uint32_t> renumber;
};

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

  // The names of the passes or of the resources, as a set of their indices
  // looked up by name, so that it holds no string of its own.
  template <class Item>
  struct name_of {
    const kept_vector<Item>* items;
    using is_transparent = void;
    [[nodiscard]] std::string_view operator()(std::uint32_t i) const noexcept { return (*items)[i].name; }
    [[nodiscard]] std::string_view operator()(std::string_view name) const noexcept { return name; }
  };
  template <class Item>
  struct name_hash : name_of<Item> {
    template <class Key>
    std::size_t operator()(const Key& k) const noexcept {
      return std::hash<std::string_view>{}(name_of<Item>::operator()(k));
    }
  };
  template <class Item>
  struct name_equal : name_of<Item> {
    template <class A, class B>
    bool operator()(const A& a, const B& b) const noexcept {
      return name_of<Item>::operator()(a) == name_of<Item>::operator()(b);
    }
  };
  template <class Item>
  using name_set = boost::unordered_flat_set<std::uint32_t, name_hash<Item>, name_equal<Item>>;

  state();
  state(const state&) = delete;
  state& operator=(const state&) = delete;
  ~state();

  std::uint64_t serial = 0;
  frame_options options;
  kept_vector<pass> passes;
  kept_vector<resource> resources;
  kept_vector<bucket> buckets;
  name_set<pass> pass_names;  // to refuse one twice
  name_set<resource> resource_names;
  std::optional<error> first_error;  // the first bad call, which build() returns

  // hash()'s storage (frame_hash.cpp).
  struct hash_scratch;
  std::unique_ptr<hash_scratch> hashing;

  // A new pass, resource or bucket: one reset() forgot, its storage kept,
  // cleared.
  pass& new_pass();
  resource& new_resource();
  bucket& new_bucket();

  // Where a resource goes when it names no pool (frame_pools, by kind,
  // lifetime and memory class), else its own; the pool's options.
  struct pool_choice {
    std::string_view name;
    liveness_mode liveness = liveness_mode::conservative;
    std::optional<memory_class> memory;
    friend bool operator==(const pool_choice&, const pool_choice&) = default;
  };
  [[nodiscard]] pool_choice choose_pool(const resource& r) const;
  // Each resource's pool, in `out`: invalid_id for a pool that is no id,
  // incompatible_pool_member for two resources in one pool that differ in
  // its options (frame_build.cpp).
  [[nodiscard]] result<void> assign_pools(frame_pool_set& out) const;
  // The buckets declared: invalid_id for a class that is no id,
  // dangling_reference for a budget of a pool no resource is in.
  [[nodiscard]] result<void> check_buckets(const frame_pool_set& pools) const;

  // Derives `out`: the `after` of each pass (plan indices, ascending), from
  // the accesses and the explicit ones (frame_order.cpp); dependency_cycle or
  // dependency_not_earlier for an explicit one naming a later pass.
  [[nodiscard]] result<void> derive_after(frame_order& out) const;

  // invalid_access where a pass reads a transient buffer before any pass
  // writes it (frame_build.cpp); `seen` is working storage.
  [[nodiscard]] result<void> check_buffers_written_first(std::vector<std::uint8_t>& seen) const;
};

}  // namespace ferrum
