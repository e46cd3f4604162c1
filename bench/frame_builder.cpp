// frame_builder — declaring a frame in C++ and hashing it, against filling
// the same plan by hand with today's API, in the same run.
//
// The frame: N passes in a chain, each with a 64-byte parameter block,
// reading the buffer the pass before wrote and writing its own (a scaled
// f32 buffer in an interval pool); every fourth pass also samples the image
// the one before it wrote and writes its own (screen-sized rgba16-float).
// Its names are made once, as an engine's would be (string literals).
//
// * `hash, warm`: one builder kept, each frame reset() and the same
//   declarations + frame_builder::hash(), which finds the encoding it made
//   the frame before (equal bytes, equal digest; no SHA-256);
// * `hash, changed`: the same, the bucket's third dimension cycling over
//   three values, so that no frame's encoding is either of the two the
//   builder keeps: declarations + encoding + SHA-256;
// * `cache hit`: `hash, warm` through program_cache::get(), which finds
//   the program compiled the first frame;
// * `build+hash`: a new builder's declarations + build() (which derives
//   the order, pools, contracts and validates) + hash_plan, as before
//   hash() existed;
// * `by hand`: filling ferrum::plan's vectors of ids with the same plan (its
//   `after` spelled out) + validate_plan + hash_plan: today's API.
// All give the same hash, which the benchmark checks. Wall: the median of
// many runs; CPU: getrusage (user + system) over them all, per frame;
// allocations per frame, counted by the replaced operator new
// (tools/allocation_counter.cpp). Microseconds; `ratio`: wall against
// `by hand`.
//
//   ferrum_bench_frame_builder           # 100 and 1000 passes
//   ferrum_bench_frame_builder 100       # one size
#include "allocation_counter.hpp"

#include "ferrum/binding/frame_builder.hpp"
#include "ferrum/binding/plan.hpp"
#include "ferrum/binding/program_cache.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

bool has_image(std::size_t i) { return i % 4 == 3; }

// The frame's names, made once.
struct frame_names {
  std::vector<std::string> passes, buffers, images;
  explicit frame_names(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::string k = std::to_string(i);
      passes.push_back("node/" + k);
      buffers.push_back("resource/" + k);
      images.push_back("image/" + k);
    }
  }
};

// The frame, declared into `f` (a new or reset builder); `d2` the bucket's
// third dimension.
void declare(ferrum::frame_builder& f, const frame_names& names, std::size_t passes, std::uint64_t d2 = 1) {
  using ferrum::resource_access;
  ferrum::buffer_handle previous{};
  ferrum::image_handle previous_image{};
  bool any_image = false;
  for (std::size_t i = 0; i < passes; ++i) {
    const ferrum::node_handle pass = f.add_pass(names.passes[i], {.parameter_bytes = 64});
    if (i > 0) f.access(pass, previous, resource_access::read);
    previous = f.add_buffer(names.buffers[i],
                            {.size = ferrum::resource_demand::scaled(0, 256, 0), .element = ferrum::element_type::f32});
    f.access(pass, previous, resource_access::write);
    if (!has_image(i)) continue;
    if (any_image) f.access(pass, previous_image, resource_access::sampled);
    previous_image =
        f.add_image(names.images[i], {.image = {.format = ferrum::image_format::rgba16_float, .bucket_extent = true}});
    f.access(pass, previous_image, resource_access::storage_write);
    any_image = true;
  }
  f.add_bucket("frame", {64, 32, d2});
}

const ferrum::frame_options options{.lanes = 2, .budget_bytes = std::uint64_t{1} << 32};

ferrum::plan declared(const frame_names& names, std::size_t passes) {
  ferrum::frame_builder f(options);
  declare(f, names, passes);
  return f.build().value();
}

template <class Id>
Id id(const std::string& text) {
  return Id::make(text).value();
}

// The same plan as `declared`, by hand: what an engine writes today.
ferrum::plan by_hand(std::size_t passes, const std::string& f32_contract, const std::string& args_contract) {
  using ferrum::resource_access;
  ferrum::plan p;
  p.format = ferrum::plan_format::v2;
  p.lanes = 2;
  p.budget_bytes = std::uint64_t{1} << 32;
  const auto bindings = id<ferrum::pool_id>("pool/bindings");
  const auto transient = id<ferrum::pool_id>("pool/transient");
  const auto targets = id<ferrum::pool_id>("pool/targets");
  std::string last_image;
  for (std::size_t i = 0; i < passes; ++i) {
    const std::string n = std::to_string(i);
    ferrum::plan_node node;
    node.id = id<ferrum::node_id>("node/" + n);
    ferrum::resource_descriptor args;
    args.id = id<ferrum::resource_id>("resource/" + n + ".args");
    args.pool = bindings;
    args.kind = ferrum::allocation_kind::binding;
    args.node = node.id;
    args.demand = ferrum::resource_demand::fixed(64);
    args.alignment = 64;
    args.usage = ferrum::buffer_usage::binding;
    args.storage.digest = args_contract;
    node.binding = args.id;
    node.resources.push_back(args.id);
    node.access.push_back(resource_access::read);
    p.resources.push_back(std::move(args));
    if (i > 0) {
      node.resources.push_back(id<ferrum::resource_id>("resource/" + std::to_string(i - 1)));
      node.access.push_back(resource_access::read);
      node.after.push_back(p.nodes.back().id);
    }
    ferrum::resource_descriptor buffer;
    buffer.id = id<ferrum::resource_id>("resource/" + n);
    buffer.pool = transient;
    buffer.demand = ferrum::resource_demand::scaled(0, 256, 0);
    buffer.alignment = 256;
    buffer.element = ferrum::element_type::f32;
    buffer.storage.digest = f32_contract;
    node.resources.push_back(buffer.id);
    node.access.push_back(resource_access::write);
    p.resources.push_back(std::move(buffer));
    if (has_image(i)) {
      // The pass before (its `after` already) wrote the buffer; the image
      // before is older, so no further `after`.
      if (!last_image.empty()) {
        node.resources.push_back(id<ferrum::resource_id>(last_image));
        node.access.push_back(resource_access::sampled);
      }
      ferrum::resource_descriptor image;
      image.id = id<ferrum::resource_id>("image/" + n);
      image.pool = targets;
      image.image = ferrum::image_desc{.format = ferrum::image_format::rgba16_float, .bucket_extent = true};
      last_image = image.id.str();
      node.resources.push_back(image.id);
      node.access.push_back(resource_access::storage_write);
      p.resources.push_back(std::move(image));
    }
    p.nodes.push_back(std::move(node));
  }
  ferrum::bucket_spec b{id<ferrum::bucket_class>("frame"), {64, 32, 1}, {}};
  for (const auto& pool : {bindings, targets, transient}) b.budgets.push_back({pool, 0, p.budget_bytes});
  p.buckets.push_back(std::move(b));
  p.pools.push_back({targets, ferrum::liveness_mode::interval, std::nullopt});
  p.pools.push_back({transient, ferrum::liveness_mode::interval, std::nullopt});
  return p;
}

// This thread's CPU time so far (getrusage user + system; the benchmark
// runs on one), in microseconds.
double thread_cpu_us() noexcept {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  const timeval& u = usage.ru_utime;
  const timeval& k = usage.ru_stime;
  return static_cast<double>(u.tv_sec + k.tv_sec) * 1e6 + static_cast<double>(u.tv_usec + k.tv_usec);
}

// One way's figures: the median wall time, the CPU time and the
// allocations per run.
struct figures {
  double wall_us = 0;
  double cpu_us = 0;
  double allocations = 0;
};

template <class Work>
figures measure(Work work, int runs) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(runs));
  const double cpu = thread_cpu_us();
  const std::uint64_t allocations = ferrum::tools::allocations_so_far();
  for (int r = 0; r < runs; ++r) {
    const auto start = clock_type::now();
    work(r);
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  figures f;
  f.allocations = static_cast<double>(ferrum::tools::allocations_so_far() - allocations) / runs;
  f.cpu_us = (thread_cpu_us() - cpu) / runs;
  std::nth_element(us.begin(), us.begin() + runs / 2, us.end());
  f.wall_us = us[static_cast<std::size_t>(runs / 2)];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{100, 1000};
  if (argc > 1) sizes = {static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10))};
  const std::string f32_contract = ferrum::derived_contract(ferrum::buffer_usage::storage, ferrum::element_type::f32);
  const std::string args_contract = ferrum::derived_contract(ferrum::buffer_usage::binding, ferrum::element_type::u8);
  std::printf("%8s %-14s %10s %10s %12s %8s\n", "passes", "way", "wall (us)", "cpu (us)", "allocations", "ratio");
  for (const std::size_t n : sizes) {
    const frame_names names(n);
    const auto built = ferrum::hash_plan(declared(names, n)).value();
    const auto hand = ferrum::hash_plan(by_hand(n, f32_contract, args_contract)).value();
    ferrum::frame_builder kept(options);
    declare(kept, names, n);
    const auto hashed = kept.hash().value();
    if (!(built == hand) || !(hashed == hand)) {
      std::fprintf(stderr, "the frame of %zu passes hashes %s built, %s by hand, %s by hash()\n", n,
                   built.str().c_str(), hand.str().c_str(), hashed.str().c_str());
      return 1;
    }
    const int runs = n <= 100 ? 2001 : 201;
    int failed = 0;
    const auto redeclare = [&](std::uint64_t d2) -> ferrum::frame_builder& {
      kept.reset();
      declare(kept, names, n, d2);
      return kept;
    };
    failed += redeclare(1).hash() ? 0 : 1;  // warm: the builder's storage grown
    const figures warm = measure([&](int) { failed += redeclare(1).hash() ? 0 : 1; }, runs);
    // Warmed over the three shapes first: the encodings' storage grown.
    for (int r = 0; r < 6; ++r) failed += redeclare(1 + static_cast<std::uint64_t>(r % 3)).hash() ? 0 : 1;
    const figures changed =
        measure([&](int r) { failed += redeclare(1 + static_cast<std::uint64_t>(r % 3)).hash() ? 0 : 1; }, runs);
    ferrum::program_cache cache(2);
    failed += cache.get(redeclare(1)) ? 0 : 1;
    const figures hit = measure([&](int) { failed += cache.get(redeclare(1)) ? 0 : 1; }, runs);
    const figures builder = measure(
        [&](int) {
          ferrum::frame_builder f(options);
          declare(f, names, n);
          failed += ferrum::hash_plan(f.build().value()) ? 0 : 1;
        },
        runs);
    const figures manual = measure(
        [&](int) {
          const ferrum::plan p = by_hand(n, f32_contract, args_contract);
          if (!ferrum::validate_plan(p)) std::abort();
          failed += ferrum::hash_plan(p) ? 0 : 1;
        },
        runs);
    if (failed != 0 || cache.stats().misses != 1) {
      std::fprintf(stderr, "%d frames failed; %llu cache misses\n", failed,
                   static_cast<unsigned long long>(cache.stats().misses));
      return 1;
    }
    const auto row = [&](const char* way, const figures& f) {
      std::printf("%8zu %-14s %10.1f %10.1f %12.1f %8.3f\n", n, way, f.wall_us, f.cpu_us, f.allocations,
                  f.wall_us / manual.wall_us);
    };
    row("hash, warm", warm);
    row("hash, changed", changed);
    row("cache hit", hit);
    row("build+hash", builder);
    row("by hand", manual);
  }
  return 0;
}
