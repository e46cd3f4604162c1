// ferrum/binding/frame_builder.hpp — a frame declared in C++: passes, the
// buffers and images they create or import, and how each pass accesses them,
// through typed handles; `build()` gives the `ferrum::plan` the equivalent
// `ferrum.plan.v2` file would (write_plan_json writes that file).
//
// What the plan file spells out and an engine should not have to is derived
// (docs/interfaces.md, "Frame builder"):
// * order: a pass runs after the earlier passes whose accesses it conflicts
//   with (it reads what they wrote, writes what they read or wrote, per mip
//   level and layer of an image; across queues also an image they need in
//   another layout), listed as the plan's `after` once the ones implied
//   through others are dropped; `after()` adds what the data does not say;
// * pools, one per kind of resource, lifetime and memory class
//   (frame_pools), `interval` for the frame's own transient ones; budgets;
//   storage contract digests (derived_contract); the binding resource of a
//   pass's parameter block, its id, size and alignment.
// Each is an override where a plan must match a file written by hand.
//
// A bad declaration is refused by build(), naming the pass and resource by
// their names with the codes of the plan file's errors (docs/errors.md):
// a name twice (duplicate_id), a handle of another builder (dangling_reference),
// an invocation buffer read before a pass writes it (invalid_access), an
// `after` naming a later pass (dependency_not_earlier) or closing a cycle
// (dependency_cycle), and what validate_plan refuses of the plan (an image
// read first: image_read_before_write; an access a format cannot take:
// invalid_image_access; ...).
//
//   ferrum::frame_builder f;
//   ferrum::image_handle hdr = f.add_image("image/hdr", {.image = {.format = ferrum::image_format::rgba16_float,
//                                                                  .bucket_extent = true}});
//   ferrum::node_handle light = f.add_pass("node/lighting", {.parameter_bytes = 64});
//   f.access(light, hdr, ferrum::resource_access::storage_write);
//   ferrum::node_handle tone = f.add_pass("node/tonemap");
//   f.access(tone, hdr, ferrum::resource_access::sampled);   // after node/lighting
//   ferrum::result<ferrum::plan> plan = f.build();
#pragma once

#include "ferrum/binding/plan.hpp"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferrum {

// A pass, buffer or image of one frame_builder: its index in declaration
// order and the builder's serial, so that a handle of another builder (or a
// default-made one) is refused.
// `Tag` keeps the kinds apart (a buffer's handle is no image's).
template <class Tag>
struct frame_handle {
  std::uint32_t index = 0;
  std::uint64_t builder = 0;
  friend bool operator==(const frame_handle&, const frame_handle&) = default;
};
using node_handle = frame_handle<struct frame_pass_tag>;
using buffer_handle = frame_handle<struct frame_buffer_tag>;
using image_handle = frame_handle<struct frame_image_tag>;

// A pass: its queue and its parameter block (the node's binding slot), if
// it has parameters.
struct pass_info {
  queue_kind queue = queue_kind::compute;
  // The parameter block's bytes; 0: the pass has none.
  std::uint64_t parameter_bytes = 0;
  // Overrides: the block's resource id (else `resource/<name>.args`, the
  // pass's name without its `node/`), its alignment (else the largest power
  // of two dividing its size, at most 256), its contract (else
  // derived_contract).
  std::string_view parameters = {};
  std::uint64_t parameter_alignment = 0;
  std::string_view parameter_contract = {};
};

// A buffer the frame creates (memory device, upload or readback) or the
// engine's (imported).
struct buffer_info {
  resource_demand size = resource_demand::fixed(0);
  element_type element = element_type::u8;
  std::uint64_t alignment = 256;
  buffer_usage usage = buffer_usage::storage;
  // invocation (transient, the default), persistent or history (a pair's
  // current; its previous: frame_builder::add_previous).
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  memory_class memory = memory_class::device;
  bool kept = false;  // an output the engine reads some way ferrum does not see
  // Overrides: its pool (else frame_pools), its contract (else derived_contract).
  std::string_view pool = {};
  std::string_view contract = {};
};

// An image the frame creates, or the engine's (memory imported).
struct image_info {
  image_desc image;
  allocation_lifetime lifetime = allocation_lifetime::invocation;
  memory_class memory = memory_class::device;
  bool kept = false;
  std::string_view pool = {};  // override (else frame_pools)
};

// The pools resources go to when they name none: by kind, lifetime and
// memory class. Transient device pools are `interval`; the others carry the
// memory class they are of (none for device).
struct frame_pools {
  std::string bindings = "pool/bindings";
  std::string buffers = "pool/transient";  // invocation, device
  std::string persistent = "pool/persistent";
  std::string history = "pool/history";
  std::string upload = "pool/upload";
  std::string readback = "pool/readback";
  std::string imported = "pool/engine";
  std::string images = "pool/targets";  // invocation, device
  std::string persistent_images = "pool/persistent.images";
  std::string history_images = "pool/history.images";
  std::string imported_images = "pool/engine.images";
};

// What the frame runs at: lanes, memory budget, culling, pools.
struct frame_options {
  std::uint32_t lanes = 2;
  std::uint64_t budget_bytes = std::uint64_t{256} << 20;
  bool cull = true;
  frame_pools pools = {};
};

// A pool's budget in a bucket; a pool a bucket names none for gets
// [0, budget_bytes].
struct pool_budget {
  std::string_view pool;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
};

// The storage contract digest of a buffer the builder makes: SHA-256 (64
// hex digits) of `ferrum.contract.v1/<usage>/<element>/<allocator>/<view>`,
// so that resources of one description share it.
[[nodiscard]] std::string derived_contract(buffer_usage usage, element_type element);

class frame_builder {
 public:
  // Movable (its handles move with it: the identity goes along); a
  // moved-from builder may only be assigned to or destroyed.
  explicit frame_builder(frame_options options = {});
  frame_builder(const frame_builder&) = delete;
  frame_builder& operator=(const frame_builder&) = delete;
  frame_builder(frame_builder&&) noexcept;
  frame_builder& operator=(frame_builder&&) noexcept;
  ~frame_builder();

  // A pass, run in declaration order where the accesses do not order it.
  node_handle add_pass(std::string_view name, pass_info info = {});
  buffer_handle add_buffer(std::string_view name, buffer_info info);
  image_handle add_image(std::string_view name, image_info info);
  // The previous of a history pair: what `current` (lifetime history) held
  // after the wave before; its description and pool are the current's.
  buffer_handle add_previous(std::string_view name, buffer_handle current);
  image_handle add_previous(std::string_view name, image_handle current);

  // How `pass` uses a resource; an image's may reach part of it. A pass may
  // access one image more than once, each time another part.
  void access(node_handle pass, buffer_handle buffer, resource_access how);
  void access(node_handle pass, image_handle image, resource_access how, subresource_range range = {});
  // `pass` runs after `earlier` although their accesses do not say so.
  void after(node_handle pass, node_handle earlier);

  // A bucket the frame runs at; none: one `frame@1x1x1`.
  void add_bucket(std::string_view cls, bucket_capacity dims, std::span<const pool_budget> budgets);
  void add_bucket(std::string_view cls, bucket_capacity dims, std::initializer_list<pool_budget> budgets = {});

  // The plan, validated (validate_plan), or the first bad declaration.
  // The builder is left as it was: build() again after more declarations.
  [[nodiscard]] result<plan> build() const;

  // The plan hash of what is declared, equal to hash_plan(*build()), taken
  // from the declarations without making the plan, in storage the builder
  // keeps: once a builder has hashed a frame, reset() and the same
  // declarations again (names that fit the storage of the ones before)
  // hash with no allocation. It refuses what build() refuses of the
  // declarations themselves, with build()'s error (a bad or repeated name,
  // a handle of another builder, a pool or bucket that is no id, two kinds
  // of resources in one pool, a cycle, a transient buffer read first, a
  // budget for a pool no resource is in); what validate_plan would refuse of
  // the plan it defers: the hash is the refused plan's, and build() (or
  // program_cache::get) gives the error. Not const: it works in the
  // builder's storage (one thread at a time, as for the declarations).
  [[nodiscard]] result<plan_hash> hash();

  // Forgets every declaration and keeps the storage they took, for the next
  // frame's: handles made before are refused from now on (a new identity);
  // the options stay.
  void reset();

  [[nodiscard]] std::size_t pass_count() const noexcept;

  struct state;

 private:
  std::unique_ptr<state> s_;
};

}  // namespace ferrum
