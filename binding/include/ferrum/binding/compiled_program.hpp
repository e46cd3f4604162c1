// ferrum/binding/compiled_program.hpp — the whole cold path: a plan in, an
// immutable, fingerprinted compiled program out.
//
//   ferrum::result<ferrum::compiled_program> program = ferrum::compile(plan);
//   if (!program) { report(program.error()); return; }
//   for (const ferrum::compiled_bucket& b : program->buckets)
//     use(b.id, b.binding->fingerprint());
//
// Stages, each its own unit: validate_plan (plan.hpp), hash_plan,
// derive_pool_domains (pool_domain.hpp), compile_wave_domain_layout
// (wave_layout.hpp), compile_capacity_layout (capacity_layout.hpp, with
// resolve_demand from demand.hpp), check_admission (admission.hpp),
// compile_program_binding_layouts (program_binding.hpp). O(n log n) in nodes
// plus resources; compile uses a second thread for independent stages (the
// plan hash, the node index) and joins it before it returns. Reentrant: any
// number of threads may compile at once.
#pragma once

#include "ferrum/binding/culling.hpp"
#include "ferrum/binding/dependency_graph.hpp"
#include "ferrum/binding/lane_recipe.hpp"
#include "ferrum/binding/program_binding.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferrum {

// One bucket of a compiled program.
// One memory class's part of a lane's address space: [begin, begin + size),
// a buffer of its own in each lane (a scheduler lane's `memory[class]`), in
// which lane offset x lies at x - begin. Size 0: no pool of the class.
struct memory_window {
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
  friend bool operator==(const memory_window&, const memory_window&) = default;
};

// The order of the windows in a lane.
inline constexpr std::array<memory_class, memory_class_count> window_order{
    memory_class::upload, memory_class::device, memory_class::readback, memory_class::imported};

struct compiled_bucket {
  bucket_id id;
  bucket_spec spec;
  // Per domain (program order: pool id), its capacity layout in this bucket
  // (the "domains" of ferrum.compiled.v1).
  std::vector<capacity_layout> capacity_layouts;
  // The program binding layout; null when the plan has no binding resources.
  std::shared_ptr<const program_binding_layout> binding;
  // A lane's memory: one address space holding every pool's arena, pool d's
  // at `pool_offsets[d]` (program order), a multiple of its largest
  // alignment and of 4, cut into a window per memory class (`windows`,
  // indexed by index_of(memory_class)): upload first — the binding pool at 0,
  // so binding slot offsets are offsets in the lane — then device, then
  // readback, pools in program order within a class, and last the imported
  // window, which no lane allocates (its resources are the engine's buffers,
  // named by each wave; its offsets keep their ranges apart for the barrier
  // sweep). `lane_size_bytes` is where the last allocated arena ends, rounded
  // up to whole 32-bit words (at least one): what admission counts for a
  // lane of this bucket, which allocates the windows and not the padding
  // between them (docs/design.md, "Lane memory").
  std::vector<std::uint64_t> pool_offsets;
  std::uint64_t lane_size_bytes = 0;
  // What a lane would take with no aliasing at all: the same placement of
  // every pool's unaliased arena. Less lane_size_bytes, what aliasing saves.
  std::uint64_t unaliased_lane_size_bytes = 0;
  // What each lane of this bucket is made from: every node's resources in
  // the lane, the binding backing slices (ferrum/binding/lane_recipe.hpp).
  lane_recipe lane;
  std::array<memory_window, memory_class_count> windows{};
  // The window of the image pools a lane makes (imported ones are in the
  // imported window), past every other (docs/design.md, "Images"):
  // each image's texels, tightly packed, where its pool's layout puts them.
  // A lane holds none of it — it places its images in image memory of their
  // own, by the device's sizes (place_lane_images) — but the offsets keep
  // images that may not share memory apart for the barrier sweep, and its
  // size, against `unaliased_image_bytes`, is what aliasing saves in texels.
  memory_window image_window;
  std::uint64_t unaliased_image_bytes = 0;

  // The window of a class.
  [[nodiscard]] const memory_window& window(memory_class c) const noexcept { return windows[index_of(c)]; }
  // The bytes one lane of this bucket takes (lane_size_bytes).
  [[nodiscard]] std::uint64_t lane_bytes() const noexcept { return lane_size_bytes; }
  // What admission counts for one lane of this bucket: its buffer's bytes
  // and its images' texels (the device's image memory for them is at least
  // that; place_images says how much on a given device).
  [[nodiscard]] std::uint64_t admitted_lane_bytes() const noexcept { return lane_size_bytes + image_window.size; }
};

// Immutable once made; share it across threads freely.
struct compiled_program {
  plan_hash hash;
  std::size_t node_count = 0;
  // Per node its queue and the nodes it runs after (a chain for a v1 plan).
  dependency_graph dependencies;
  std::uint32_t lanes = 1;
  std::uint64_t budget_bytes = 0;
  // What lanes x buckets of arenas take; <= budget_bytes.
  std::uint64_t admitted_bytes = 0;
  // Pools in id order, and what one wave claims of each.
  std::vector<pool_domain> domains;
  std::vector<wave_domain_layout> wave_layouts;
  // Buckets in id order.
  std::vector<compiled_bucket> buckets;
  // Per node: whether it is culled, and why (ferrum/binding/culling.hpp).
  // A culled node has no uses in the lane recipes and the scheduler never
  // encodes nor submits it.
  std::vector<cull_reason> culling;
  // How many of them are culled; the first and the last node that is not
  // (node_count when every one is).
  std::size_t culled_nodes = 0;
  std::size_t first_live_node = 0;
  std::size_t last_live_node = 0;

  [[nodiscard]] bool culled(std::size_t node) const noexcept { return node < culling.size() && culling[node].culled; }

  // The bucket with id `id`, or nullptr.
  [[nodiscard]] const compiled_bucket* find(const bucket_id& id) const noexcept;
};

// Compiles a plan; the first failing check's error (with the JSON path of the
// offending element) otherwise.
[[nodiscard]] result<compiled_program> compile(const plan& p);

}  // namespace ferrum
