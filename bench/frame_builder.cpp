// frame_builder — declaring a frame in C++ and hashing it, against filling
// the same plan by hand with today's API, in the same run.
//
// The frame: N passes in a chain, each with a 64-byte parameter block,
// reading the buffer the pass before wrote and writing its own (a scaled
// f32 buffer in an interval pool); every fourth pass also samples the image
// the one before it wrote and writes its own (screen-sized rgba16-float).
// `builder` times frame_builder's declarations + build() (which derives the
// order, pools, contracts and validates) + hash_plan; `by hand` times
// filling ferrum::plan's vectors of ids with the same plan (its `after`
// spelled out) + validate_plan + hash_plan. Both give the same hash, which
// the benchmark checks. Median of many runs, microseconds.
//
//   ferrum_bench_frame_builder           # 100 and 1000 passes
//   ferrum_bench_frame_builder 100       # one size
#include "ferrum/binding/frame_builder.hpp"
#include "ferrum/binding/plan.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

bool has_image(std::size_t i) { return i % 4 == 3; }

ferrum::plan declared(std::size_t passes) {
  using ferrum::resource_access;
  ferrum::frame_builder f({.lanes = 2, .budget_bytes = std::uint64_t{1} << 32});
  ferrum::buffer_handle previous{};
  ferrum::image_handle previous_image{};
  bool any_image = false;
  for (std::size_t i = 0; i < passes; ++i) {
    const std::string n = std::to_string(i);
    const ferrum::node_handle pass = f.add_pass("node/" + n, {.parameter_bytes = 64});
    if (i > 0) f.access(pass, previous, resource_access::read);
    previous = f.add_buffer("resource/" + n,
                            {.size = ferrum::resource_demand::scaled(0, 256, 0), .element = ferrum::element_type::f32});
    f.access(pass, previous, resource_access::write);
    if (!has_image(i)) continue;
    if (any_image) f.access(pass, previous_image, resource_access::sampled);
    previous_image =
        f.add_image("image/" + n, {.image = {.format = ferrum::image_format::rgba16_float, .bucket_extent = true}});
    f.access(pass, previous_image, resource_access::storage_write);
    any_image = true;
  }
  f.add_bucket("frame", {64, 32, 1});
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

template <class Work>
double median_us(Work work, int runs) {
  std::vector<double> us;
  for (int r = 0; r < runs; ++r) {
    const auto start = clock_type::now();
    work();
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  std::nth_element(us.begin(), us.begin() + runs / 2, us.end());
  return us[static_cast<std::size_t>(runs / 2)];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{100, 1000};
  if (argc > 1) sizes = {static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10))};
  const std::string f32_contract = ferrum::derived_contract(ferrum::buffer_usage::storage, ferrum::element_type::f32);
  const std::string args_contract = ferrum::derived_contract(ferrum::buffer_usage::binding, ferrum::element_type::u8);
  std::printf("%8s %14s %14s %8s\n", "passes", "builder (us)", "by hand (us)", "ratio");
  for (const std::size_t n : sizes) {
    const auto built = ferrum::hash_plan(declared(n)).value();
    const auto hand = ferrum::hash_plan(by_hand(n, f32_contract, args_contract)).value();
    if (!(built == hand)) {
      std::fprintf(stderr, "the builder's plan of %zu passes hashes %s, by hand %s\n", n, built.str().c_str(),
                   hand.str().c_str());
      return 1;
    }
    const int runs = n <= 100 ? 2001 : 201;
    const double builder = median_us([&] { (void)ferrum::hash_plan(declared(n)).value(); }, runs);
    const double manual = median_us(
        [&] {
          const ferrum::plan p = by_hand(n, f32_contract, args_contract);
          if (!ferrum::validate_plan(p)) std::abort();
          (void)ferrum::hash_plan(p).value();
        },
        runs);
    std::printf("%8zu %14.1f %14.1f %8.2f\n", n, builder, manual, builder / manual);
  }
  return 0;
}
