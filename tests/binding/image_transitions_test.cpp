// Tests of the layouts the compiler derives for a plan's images: per bucket
// each image's extent and starting layout, each node's transitions (old ->
// new layout, the access waited for), the barriers that make them, and the
// same from a saved program file.
#include "ferrum/binding/compiled_program.hpp"
#include "ferrum/binding/compiled_program_file.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "example_plans.hpp"
#include "pinned_digests.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace ferrum;

namespace {

plan images_plan() { return test::load_source_plan(pinned::images_hash.plan_file); }

std::size_t image_index(const lane_recipe& lane, std::string_view id) {
  for (std::size_t i = 0; i < lane.images.size(); ++i)
    if (lane.images[i].resource.view() == id) return i;
  FAIL("no image " << id);
  return 0;
}

// "node image from->to" per transition, in node order.
std::vector<std::string> described(const lane_recipe& lane, const plan& p) {
  std::vector<std::string> out;
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (const image_transition& t : lane.node_transitions(n))
      out.push_back(p.nodes[n].id.str() + " " + lane.images[t.image].resource.str() + " " +
                    std::string(to_string(t.from)) + "->" + std::string(to_string(t.to)));
  return out;
}

}  // namespace

TEST_CASE("image transitions: every node's, from the layout the image's previous use left", "[binding][image]") {
  const plan p = images_plan();
  const compiled_program program = compile(p).value();
  REQUIRE(program.buckets.size() == 2);
  const lane_recipe& lane = program.buckets[0].lane;
  CHECK(described(lane, p) == std::vector<std::string>{
                                  "node/gbuffer image/scene.color undefined->color-attachment",
                                  "node/gbuffer image/scene.depth undefined->depth-attachment",
                                  "node/ssao image/ao undefined->general",
                                  "node/ssao image/scene.depth depth-attachment->shader-read-only",
                                  "node/lighting image/ao general->shader-read-only",
                                  "node/lighting image/lit undefined->general",
                                  "node/lighting image/scene.color color-attachment->shader-read-only",
                                  "node/taa image/history transfer-dst->shader-read-only",
                                  "node/taa image/lit general->shader-read-only",
                                  "node/taa image/resolved undefined->general",
                                  "node/keep image/history shader-read-only->transfer-dst",
                                  "node/keep image/resolved general->transfer-src",
                                  "node/tonemap image/out undefined->general",
                                  "node/tonemap image/resolved transfer-src->general",
                              });
  // What each waits for: the previous use's access, none for a first use in
  // the wave; the persistent history's first waits for the last wave's last.
  const auto taa = lane.node_transitions(3);
  REQUIRE(taa.size() == 3);
  CHECK(taa[0].after == resource_access::transfer_dst);
  CHECK(taa[0].access == resource_access::sampled);
  CHECK(taa[1].after == resource_access::storage_write);
  CHECK_FALSE(taa[2].after.has_value());
}

TEST_CASE("image transitions: each image's layouts chain, from where a wave starts it", "[binding][image]") {
  const plan p = images_plan();
  const compiled_program program = compile(p).value();
  for (const compiled_bucket& bucket : program.buckets) {
    const lane_recipe& lane = bucket.lane;
    std::map<std::size_t, image_layout> layout;
    for (std::size_t i = 0; i < lane.images.size(); ++i) layout[i] = lane.images[i].initial;
    for (const image_transition& t : lane.transitions) {
      CHECK(t.from == layout[t.image]);
      CHECK(t.from != t.to);
      layout[t.image] = t.to;
    }
    // A persistent image ends the wave where the next one starts it.
    const std::size_t history = image_index(lane, "image/history");
    CHECK(lane.images[history].initial == image_layout::transfer_dst);
    CHECK(layout[history] == lane.images[history].initial);
    CHECK(lane.images[image_index(lane, "image/ao")].initial == image_layout::undefined);
  }
}

TEST_CASE("image transitions: images take each bucket's extent, and the accesses the plan makes", "[binding][image]") {
  const plan p = images_plan();
  const compiled_program program = compile(p).value();
  const lane_image& small = program.buckets[0].lane.images[image_index(program.buckets[0].lane, "image/lit")];
  const lane_image& large = program.buckets[1].lane.images[image_index(program.buckets[1].lane, "image/lit")];
  CHECK(small.image.width == 320);
  CHECK(small.image.height == 180);
  CHECK(large.image.width == 640);
  CHECK(large.image.height == 360);
  CHECK_FALSE(small.image.bucket_extent);
  CHECK(small.image.format == image_format::rgba16_float);
  CHECK(small.takes(resource_access::storage_write));
  CHECK(small.takes(resource_access::sampled));
  CHECK_FALSE(small.takes(resource_access::transfer_src));
  const lane_image& depth = program.buckets[0].lane.images[image_index(program.buckets[0].lane, "image/scene.depth")];
  CHECK(depth.takes(resource_access::depth_attachment));
  CHECK_FALSE(depth.takes(resource_access::storage_read));
}

TEST_CASE("image transitions: a node that makes one opens with a barrier, the first node too", "[binding][image]") {
  plan p = images_plan();
  const compiled_program program = compile(p).value();
  const lane_recipe& lane = program.buckets[0].lane;
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    INFO(p.nodes[n].id.str());
    if (!lane.node_transitions(n).empty()) CHECK(lane.barrier_before[n]);
    if (!lane.node_transitions(n).empty()) CHECK(lane.one_queue_barrier_before[n]);
  }
  CHECK(lane.barrier_before[0]);

  // tonemap reads resolved in the layout taa wrote it in (general): no
  // transition of its own for it, and the read after write still has its
  // barrier.
  p.nodes.erase(p.nodes.begin() + 4);  // node/keep
  p.nodes[1].access[1] = resource_access::storage_write;
  const compiled_program kept = compile(p).value();
  const lane_recipe& k = kept.buckets[0].lane;
  for (const image_transition& t : k.node_transitions(4)) CHECK(k.images[t.image].resource.view() != "image/resolved");
  CHECK(k.barrier_before[4]);
}

TEST_CASE("image transitions: transient images share bytes only when their nodes do not overlap", "[binding][image]") {
  const plan p = images_plan();
  const compiled_program program = compile(p).value();
  const compiled_bucket& bucket = program.buckets[0];
  const lane_recipe& lane = bucket.lane;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> bytes;  // id -> [begin, end)
  std::map<std::string, std::pair<std::size_t, std::size_t>> nodes;      // id -> first, last node
  for (std::size_t n = 0; n < p.nodes.size(); ++n)
    for (std::size_t k = 0; k < lane.node_uses(n).size(); ++k) {
      const lane_use& u = lane.node_uses(n)[k];
      const std::string id = p.nodes[n].resources[k].str();
      bytes[id] = {u.offset, u.offset + u.size};
      if (!nodes.contains(id)) nodes[id] = {n, n};
      nodes[id].second = n;
    }
  std::size_t shared = 0;
  for (const auto& [a, ra] : bytes)
    for (const auto& [b, rb] : bytes) {
      if (a >= b || ra.first >= rb.second || rb.first >= ra.second) continue;
      ++shared;
      INFO(a << " and " << b);
      CHECK((nodes[a].second < nodes[b].first || nodes[b].second < nodes[a].first));
    }
  CHECK(shared > 0);
  // The texels stand in a window of their own, past the lane's buffer,
  // which holds none of them.
  CHECK(bucket.image_window.size < bucket.unaliased_image_bytes);
  CHECK(bucket.image_window.begin >= bucket.lane_bytes());
  CHECK(bucket.lane_bytes() == 4);
  // Admission counts the images' texels beside the lane's buffer.
  std::uint64_t admitted = 0;
  for (const compiled_bucket& b : program.buckets) admitted += b.admitted_lane_bytes();
  CHECK(program.admitted_bytes == p.lanes * admitted);
  CHECK(bucket.admitted_lane_bytes() == bucket.lane_bytes() + bucket.image_window.size);
  for (const lane_use& u : lane.uses) CHECK(u.offset >= bucket.image_window.begin);
}

TEST_CASE("image transitions: a saved program loads with the same images and transitions", "[binding][image]") {
  const plan p = images_plan();
  const compiled_program program = compile(p).value();
  const auto bytes = save_compiled_program(program, p).value();
  const compiled_program loaded = load_compiled_program(bytes, p).value();
  REQUIRE(loaded.buckets.size() == program.buckets.size());
  for (std::size_t b = 0; b < program.buckets.size(); ++b) {
    CHECK(loaded.buckets[b].lane.images == program.buckets[b].lane.images);
    CHECK(loaded.buckets[b].lane.transitions == program.buckets[b].lane.transitions);
    CHECK(loaded.buckets[b].lane.transition_begin == program.buckets[b].lane.transition_begin);
    CHECK(loaded.buckets[b].lane.barrier_before == program.buckets[b].lane.barrier_before);
  }
  // Another image format is another plan: the file is stale for it.
  plan other = p;
  other.resources[3].image->format = image_format::rgba8_unorm;
  CHECK(load_compiled_program(bytes, other).error() == errc::program_stale);
}
