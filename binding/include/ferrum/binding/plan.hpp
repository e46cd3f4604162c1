// ferrum/binding/plan.hpp — a plan: nodes, resource descriptors, buckets, pool
// options, lanes and the memory budget. The input of the cold path.
//
// A plan is plain data; `validate_plan` checks its structure and `compile`
// (compiled_program.hpp) turns it into layouts. The fields mirror the
// `ferrum.plan.v1` and `ferrum.plan.v2` files, so an error's path
// (`/resources/3/alignment`) points into the plan whether it came from a file
// or was built in code.
//
// The format decides how nodes are ordered: in a v1 plan every node runs
// after the one before it, on the compute queue; in a v2 plan a node names its
// queue and the nodes it runs after (`plan_node::after`, each listed earlier),
// and nodes that do not depend on each other may run at once.
//
//   ferrum::plan p;
//   p.nodes.push_back({node, {res}, res});
//   p.resources.push_back(descriptor);
//   p.buckets.push_back(bucket);
//   ferrum::result<void> ok = ferrum::validate_plan(p);
#pragma once

#include "ferrum/binding/ids.hpp"
#include "ferrum/image.hpp"
#include "ferrum/memory_class.hpp"
#include "ferrum/queue_kind.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferrum {

// Whether a resource is a node's binding arena slot or shared workspace.
enum class allocation_kind : std::uint8_t { binding, workspace };
// How long a resource lives: one invocation (a wave), across the waves of
// its lane (persistent), or one wave in a history pair (v2: a current, which
// a wave writes, and its previous, `resource_descriptor::history_of`, which
// holds what the wave before it wrote, whatever lane that ran on;
// docs/plan-format.md, "History").
enum class allocation_lifetime : std::uint8_t { invocation, persistent, history };
enum class buffer_usage : std::uint8_t { binding, storage, uniform, staging };
enum class element_type : std::uint8_t { u8, u16, u32, u64, i32, f16, f32 };
enum class storage_allocator : std::uint8_t { linear_arena };
enum class storage_view : std::uint8_t { contiguous, strided };
// How a pool's invocation resources share bytes: conservative (all live at
// once, no aliasing) or interval (resources whose node intervals do not overlap
// may share bytes).
enum class liveness_mode : std::uint8_t { conservative, interval };

// How a node uses one of its resources; the compiler orders the hazards
// between nodes (a write and any other access of the same lane bytes) with
// barriers (docs/design.md, "Barriers"). Declared in ferrum.plan.v2 only;
// a resource without a declaration is read_write. A buffer takes read,
// write, read_write and the reads at the end (vertex .. uniform: what draws
// and shaders read through the graphics pipeline's fixed functions and
// uniform bindings), an image sampled .. present, each of which puts it in
// a layout (ferrum/binding/image_access.hpp). New values go at the end: the
// plan hash encodes them as numbers.
enum class resource_access : std::uint8_t {
  read,
  write,
  read_write,
  sampled,
  storage_read,
  storage_write,
  storage_read_write,
  color_attachment,
  depth_attachment,
  depth_read,
  transfer_src,
  transfer_dst,
  present,
  vertex,
  index,
  indirect,
  uniform
};
// The last value: a declared access above it is none ferrum knows.
inline constexpr resource_access last_resource_access = resource_access::uniform;

// A plan's format version: how its nodes are ordered (see above).
enum class plan_format : std::uint8_t { v1, v2 };

// The names used in plan files and reports ("linear-arena", "u8", ...).
[[nodiscard]] std::string_view to_string(allocation_kind v) noexcept;
[[nodiscard]] std::string_view to_string(allocation_lifetime v) noexcept;
[[nodiscard]] std::string_view to_string(buffer_usage v) noexcept;
[[nodiscard]] std::string_view to_string(element_type v) noexcept;
[[nodiscard]] std::string_view to_string(storage_allocator v) noexcept;
[[nodiscard]] std::string_view to_string(storage_view v) noexcept;
[[nodiscard]] std::string_view to_string(liveness_mode v) noexcept;
// "read", "write", "read-write", "sampled", "storage-read", ..., "vertex",
// "index", "indirect", "uniform"
[[nodiscard]] std::string_view to_string(resource_access v) noexcept;
// "ferrum.plan.v1" or "ferrum.plan.v2".
[[nodiscard]] std::string_view to_string(plan_format v) noexcept;

// Parses a name of `to_string` back; nullopt for any other string.
template <class Enum>
[[nodiscard]] std::optional<Enum> enum_from_string(std::string_view text) noexcept;

// A resource's size: `base + per_unit * capacity[dimension]` bytes; a fixed
// demand has per_unit 0 and no dimension.
struct resource_demand {
  std::uint64_t base = 0;
  std::uint64_t per_unit = 0;
  std::optional<std::uint8_t> dimension;  // 0..2 when scaled

  [[nodiscard]] static resource_demand fixed(std::uint64_t bytes) noexcept { return {bytes, 0, std::nullopt}; }
  [[nodiscard]] static resource_demand scaled(std::uint64_t base, std::uint64_t per_unit,
                                              std::uint8_t dimension) noexcept {
    return {base, per_unit, dimension};
  }
  friend bool operator==(const resource_demand&, const resource_demand&) = default;
};

// How a resource is stored: allocator, view and a contract digest (64 hex
// digits naming the layout contract a consumer relies on).
struct storage_contract {
  storage_allocator allocator = storage_allocator::linear_arena;
  storage_view view = storage_view::contiguous;
  std::string digest;
  friend bool operator==(const storage_contract&, const storage_contract&) = default;
};

// An image resource (ferrum.plan.v2): its format, its extent — fixed, or
// the bucket's first two capacity dimensions (`bucket_extent`), so that a
// 1920x1080 bucket gives screen-sized images, or a fraction of them
// (`extent_divisor`: "bucket/4" gives 480x270 there, each side rounded up) —
// and its mip levels and array layers. Its bytes in the lane are its texels
// (image_bytes); a device may need more, which it finds when it makes the
// lane's images.
struct image_desc {
  image_format format = image_format::rgba8_unorm;
  bool bucket_extent = false;
  std::uint32_t width = 0;  // when not bucket_extent
  std::uint32_t height = 0;
  std::uint32_t mips = 1;
  std::uint32_t layers = 1;
  // When bucket_extent: each side is ceil(the bucket's / extent_divisor);
  // 1 (the bucket's own) or a power of two in 2..max_extent_divisor.
  std::uint32_t extent_divisor = 1;
  friend bool operator==(const image_desc&, const image_desc&) = default;
};

// The largest divisor of a bucket-relative image extent ("bucket/64").
inline constexpr std::uint32_t max_extent_divisor = 64;

// The extent as a plan declares it, for reports: "bucket", "bucket/4" or
// "64x32".
[[nodiscard]] std::string extent_text(const image_desc& image);

// One resource of the plan: a buffer, or an image when `image` is set (its
// buffer fields — demand, alignment, usage, element, storage — keep their
// defaults: an image's bytes follow from its format and extent).
struct resource_descriptor {
  resource_id id;
  pool_id pool;
  allocation_kind kind = allocation_kind::workspace;
  std::optional<node_id> node;  // the owning node of a binding resource
  resource_demand demand;
  std::uint64_t alignment = 1;
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  buffer_usage usage = buffer_usage::storage;
  element_type element = element_type::u8;
  storage_contract storage;
  std::optional<image_desc> image{};
  // v2, lifetime history only: the current whose previous wave's contents
  // this resource is (read only; its description the current's).
  std::optional<resource_id> history_of{};
  // v2: an output the engine reads some other way than ferrum sees (a
  // device address it keeps, a copy it makes later): the nodes that write it
  // are never culled (docs/design.md, "Culling").
  bool kept = false;
};

// The part of an image a node's access reaches (v2, docs/plan-format.md,
// "Mip levels and layers"): mip levels [base_mip, base_mip + mips) of array
// layers [base_layer, base_layer + layers). A count of 0 runs to the image's
// last level or layer, so the default range is the whole image.
struct subresource_range {
  std::uint32_t base_mip = 0;
  std::uint32_t mips = 0;
  std::uint32_t base_layer = 0;
  std::uint32_t layers = 0;

  [[nodiscard]] bool whole() const noexcept { return *this == subresource_range{}; }
  friend bool operator==(const subresource_range&, const subresource_range&) = default;
};

// "whole", or its levels and layers: "mip 2 of layers 0..5" (a count of 0:
// "mips 1.." to the last).
[[nodiscard]] std::string to_string(const subresource_range& r);

// One node; its index in `plan::nodes` is its plan index.
struct plan_node {
  node_id id;
  std::vector<resource_id> resources;  // every resource the node uses
  std::optional<resource_id> binding;  // the binding resource it owns, if any
  // v2 only (a v1 plan keeps the defaults): the queue it runs on, and the
  // nodes whose work must be done before it starts, each listed earlier.
  queue_kind queue = queue_kind::compute;
  std::vector<node_id> after{};
  // v2 only: how the node uses each of `resources` (same length), or empty
  // for read_write throughout.
  std::vector<resource_access> access{};
  // v2 only: the part of each of `resources` the access reaches (same
  // length), or empty for every resource whole. Only an image's may be
  // other than whole; an image may be listed more than once, each time with
  // its own access and a range the others do not overlap (read mip i, write
  // mip i + 1).
  std::vector<subresource_range> ranges{};

  // How the node uses its k-th resource, and the part it reaches.
  [[nodiscard]] resource_access access_of(std::size_t k) const noexcept {
    return access.empty() ? resource_access::read_write : access[k];
  }
  [[nodiscard]] subresource_range range_of(std::size_t k) const noexcept {
    return ranges.empty() ? subresource_range{} : ranges[k];
  }
};

// Per bucket and pool: the bytes the pool's arena may take.
struct workspace_budget {
  pool_id pool;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
};

// A reusable-execution bucket: a size class of waves.
struct bucket_spec {
  bucket_class cls;
  bucket_capacity dims{1, 1, 1};
  std::vector<workspace_budget> budgets;

  // `<class>@<d0>x<d1>x<d2>`; errc::invalid_id if the class holds '@'.
  [[nodiscard]] result<bucket_id> id() const { return bucket_id::make(cls, dims); }
};

struct pool_option {
  pool_id pool;
  liveness_mode liveness = liveness_mode::conservative;
  // v2 only: the pool's memory class, where the derived one does not fit
  // (a pool of outputs the host reads is `readback`); pool_domain::memory.
  std::optional<memory_class> memory{};
};

struct plan {
  plan_format format = plan_format::v1;
  std::vector<plan_node> nodes;
  std::vector<resource_descriptor> resources;
  std::vector<bucket_spec> buckets;
  std::vector<pool_option> pools;  // pools not listed are conservative
  std::uint32_t lanes = 1;
  std::uint64_t budget_bytes = 0;
  // v2: whether compile culls the nodes none of whose writes is read
  // (compiled_program::culling; docs/design.md, "Culling"). false: every
  // node runs, as in a v1 plan, which culls nothing.
  bool cull = true;
};

// A SHA-256 digest, printed `sha256/<64 hex>`.
struct sha256_digest {
  std::array<std::uint8_t, 32> bytes{};
  [[nodiscard]] std::string str() const;
  friend bool operator==(const sha256_digest&, const sha256_digest&) = default;
  friend auto operator<=>(const sha256_digest&, const sha256_digest&) = default;
};

// The identity of a plan: SHA-256 over its canonical encoding (docs/canonical-encoding.md).
using plan_hash = sha256_digest;

// Hashes a plan. Resources, buckets, pool options, each node's resource list
// and its dependencies are encoded in id order, nodes in plan order:
// reordering the file's resources does not change the hash, reordering its
// nodes does. A v1 plan hashes as it always has; a v2 plan's encoding adds
// each node's queue and dependencies, and its declared accesses other than
// read_write (a read_write declaration hashes as none; a plan without others
// hashes as before) (docs/canonical-encoding.md). invalid_access where a v2
// node's `access` is not one valid entry per resource.
[[nodiscard]] result<plan_hash> hash_plan(const plan& p);

// Checks a plan's structure: at least one node and one bucket, unique ids,
// references that resolve, contract digests, budgets, lanes >= 1, every
// resource used by a node; in a v2 plan, dependencies that name nodes, once
// each, without a cycle, each listed before its dependant, and `access`
// empty or one resource_access per resource (invalid_access); a v1 plan may
// not set `queue`, `after` or `access` (unknown_field). Errors carry the JSON
// path of the offending element.
[[nodiscard]] result<void> validate_plan(const plan& p);

}  // namespace ferrum
