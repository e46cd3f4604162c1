// ferrum/binding/program_cache.hpp — compiled programs kept by plan hash, so
// that a frame declared again as one compiled before costs its hash
// (frame_builder::hash()) and a lookup, not a build and a compile.
//
//   ferrum::program_cache cache(8);  // at most 8 programs
//   ferrum::frame_builder f;
//   for (;;) {  // each frame
//     f.reset();
//     declare_frame(f);  // the same declarations as last frame, or not
//     auto program = cache.get(f);  // a hit: no plan built, no compile
//     if (!program) { report(program.error()); break; }
//     run(**program);
//   }
//
// Bounded: it holds at most `capacity` programs; inserting one more evicts
// the least recently used (found by get() or find(), or inserted).
// Thread-safe: one mutex guards the programs and the counters, not held
// while get() hashes, builds or compiles (the builder is the caller's, one
// thread at a time); two threads that miss on one plan at once both compile
// it, and the second keeps the first's program. The programs are immutable
// and shared: one evicted lives on in whoever holds it.
#pragma once

#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/frame_builder.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ferrum {

class program_cache {
 public:
  // get()'s answers since the cache was made: `hits` from the cache (no
  // plan built), `misses` that built the plan (and compiled it where it
  // built; those build() or compile() refused are misses too, a refusal of
  // hash() is neither), `evictions` of programs for others.
  struct counters {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t evictions = 0;
    friend bool operator==(const counters&, const counters&) = default;
  };

  // `capacity` programs at most; 0 is taken as 1.
  explicit program_cache(std::size_t capacity);
  program_cache(const program_cache&) = delete;
  program_cache& operator=(const program_cache&) = delete;
  ~program_cache();

  // The program of the plan with hash `hash`, or null; a program found is
  // the most recently used from then on. Counts nothing.
  [[nodiscard]] std::shared_ptr<const compiled_program> find(const plan_hash& hash);

  // The program of what `frame` declares: hashes it (frame_builder::hash())
  // and returns the program kept for that hash, without building the plan;
  // else builds the plan, compiles it, keeps the program (under its hash)
  // and returns it. A refusal of hash(), build() or compile() is returned,
  // and nothing is kept. With no allocation on a hit, once `frame` has
  // hashed such a frame before (frame_builder::hash()).
  [[nodiscard]] result<std::shared_ptr<const compiled_program>> get(frame_builder& frame);

  // Keeps a program compiled elsewhere (from a plan file, say) under its
  // hash, as get() would; returns the one kept, which is the one already
  // kept for that hash if there is one.
  std::shared_ptr<const compiled_program> insert(std::shared_ptr<const compiled_program> program);

  [[nodiscard]] counters stats() const;
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::size_t capacity() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace ferrum
