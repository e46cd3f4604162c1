// program_fuzz — libFuzzer target over load_compiled_program (ferrum.program.v1).
//
// Each input is loaded against every example plan twice: as it is (which
// exercises the envelope: magic, version, size, SHA-256) and resealed with
// its SHA-256 recomputed (which lets mutations reach the content checks).
// Any input must come back as an error or as a program; a crash, a hang or a
// sanitizer report is a bug. An accepted program must be safe for its plan:
// its plan hash is the plan's, and every binding layout covers its arena
// exactly with aligned slots owned by distinct nodes in order.
//
// At startup it writes the example plans' compiled programs into the directory
// named by FERRUM_PROGRAM_FUZZ_SEEDS (when set), to seed the corpus.
//
//   cmake --preset fuzz && cmake --build --preset fuzz --target ferrum_program_fuzz
//   mkdir corpus && FERRUM_PROGRAM_FUZZ_SEEDS=corpus \
//     build/fuzz/tests/fuzz/ferrum_program_fuzz -max_total_time=60 corpus/
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "program loader invariant broken: %s\n", what);
  std::abort();
}

struct example {
  ferrum::plan plan;
  ferrum::plan_hash hash;
};

std::vector<example>& examples() {
  static std::vector<example> all;
  return all;
}

void check_program(const example& e, const ferrum::compiled_program& program) {
  if (program.hash != e.hash) broken("accepted a program of another plan");
  if (program.node_count != e.plan.nodes.size()) broken("node count differs from the plan");
  if (program.admitted_bytes > program.budget_bytes) broken("admitted past the budget");
  for (const ferrum::compiled_bucket& bucket : program.buckets) {
    if (bucket.pool_offsets.size() != program.domains.size()) broken("pool offsets per domain");
    for (std::size_t d = 0; d < bucket.capacity_layouts.size(); ++d) {
      const ferrum::capacity_layout& layout = bucket.capacity_layouts[d];
      if (layout.physical_size_bytes > layout.unaliased_size_bytes) broken("aliasing grew an arena");
      // Allocated arenas lie in the lane; imported ones in the imported
      // window, image pools in the image window, both past it.
      const ferrum::memory_class memory = program.domains[d].memory;
      // Imported images are the engine's: in the imported window.
      const bool images = program.domains[d].images && memory != ferrum::memory_class::imported;
      const ferrum::memory_window& window = images ? bucket.image_window : bucket.window(memory);
      if (bucket.pool_offsets[d] < window.begin ||
          bucket.pool_offsets[d] + layout.physical_size_bytes > window.begin + window.size)
        broken("an arena outside its window");
      if (ferrum::allocated(memory) && !images && window.begin + window.size > bucket.lane_bytes())
        broken("an allocated window past the lane");
      if (images && window.begin < bucket.lane_bytes()) broken("the image window inside the lane");
      for (const ferrum::projection& p : layout.projections)
        if (p.offset + p.capacity > layout.physical_size_bytes) broken("a projection past its arena");
    }
    if (!bucket.binding) continue;
    std::vector<const ferrum::binding_slot*> by_offset;
    for (const ferrum::binding_slot& s : bucket.binding->slots()) by_offset.push_back(&s);
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    std::uint64_t end = 0;
    for (const ferrum::binding_slot* s : by_offset) {
      if (s->offset != end || s->capacity == 0 || s->offset % s->alignment != 0) broken("slots do not tile");
      end += s->capacity;
    }
    if (end != bucket.binding->physical_size_bytes()) broken("slots do not cover the arena");
    for (std::size_t i = 1; i < bucket.binding->slots().size(); ++i)
      if (bucket.binding->slots()[i - 1].node_index >= bucket.binding->slots()[i].node_index)
        broken("owners not unique or unordered");
  }
}

void load_all(const std::vector<std::byte>& bytes) {
  for (const example& e : examples()) {
    auto program = ferrum::load_compiled_program(bytes, e.plan);
    if (program)
      check_program(e, *program);
    else if (program.error().what().empty())
      broken("an error without a message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* seeds = std::getenv("FERRUM_PROGRAM_FUZZ_SEEDS");
  for (const char* name :
       {"two_nodes", "multi_bucket", "interval_liveness", "history", "two_queues", "two_queues_access", "readback",
        "imported", "images", "image_copies", "present", "frame_chains", "taa_history", "deferred_frame"}) {
    std::ifstream file(std::string(FERRUM_SOURCE_DIR) + "/examples/plans/" + name + ".json", std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    auto p = ferrum::parse_plan(text.str());
    if (!p) broken("an example plan does not parse");
    auto program = ferrum::compile(*p);
    if (!program) broken("an example plan does not compile");
    auto bytes = ferrum::save_compiled_program(*program, *p);
    if (!bytes) broken("an example program does not save");
    if (seeds != nullptr)
      std::ofstream(std::string(seeds) + "/" + name + ".program", std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    examples().push_back({std::move(*p), program->hash});
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  std::copy(data, data + size, reinterpret_cast<std::uint8_t*>(bytes.data()));
  load_all(bytes);
  if (size >= 112 + 32) {
    SHA256(data, size - 32, reinterpret_cast<unsigned char*>(bytes.data() + size - 32));
    load_all(bytes);
  }
  return 0;
}
