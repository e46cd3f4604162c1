// Generated frames declared with frame_builder over three queues: each one
// builds (validate_plan accepts its derived order: every hazard across
// queues has its path of `after`), every two conflicting accesses are
// ordered by a path, no `after` is implied by another of the same pass, it
// compiles, and its written plan reads back to the same hash, which
// frame_builder::hash() gives too.
#include "ferrum/binding/frame_builder.hpp"
#include "ferrum/binding/image_access.hpp"
#include "ferrum/binding/plan_json.hpp"

#include "plan_builder.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace ferrum;

namespace {

constexpr std::uint32_t generated_mips = 3;

struct generated_use {
  std::size_t pass;
  std::string resource;
  resource_access how;
  subresource_range range;
  bool image;
};

// A frame of `passes` passes on random queues, each using one to three of
// four buffers and two images (3 mips); a transient's first use writes it.
struct generated_frame {
  plan built;
  std::vector<generated_use> uses;
};

generated_frame generate_frame(std::mt19937_64& rng, std::size_t passes) {
  using a = resource_access;
  frame_builder f;
  // Each declared at its first use, so that none goes unused.
  std::map<std::size_t, buffer_handle> buffers;
  const auto buffer = [&](std::size_t i) {
    if (!buffers.contains(i))
      buffers[i] =
          f.add_buffer("resource/b" + std::to_string(i),
                       {.size = resource_demand::fixed(256),
                        .lifetime = i == 3 ? allocation_lifetime::persistent : allocation_lifetime::invocation});
    return buffers[i];
  };
  std::map<std::size_t, image_handle> images;
  const auto image = [&](std::size_t i) {
    if (!images.contains(i))
      images[i] = f.add_image(
          "image/i" + std::to_string(i),
          {.image = {.format = image_format::rgba16_float, .width = 16, .height = 16, .mips = generated_mips}});
    return images[i];
  };
  std::set<std::string> written;  // buffers, and "image/iN@mip"
  generated_frame out;
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  for (std::size_t p = 0; p < passes; ++p) {
    const queue_kind queue = std::array{queue_kind::compute, queue_kind::async_compute, queue_kind::transfer}[pick(3)];
    const node_handle pass = f.add_pass("node/p" + std::to_string(p), {.queue = queue, .parameter_bytes = 16});
    std::vector<std::size_t> chosen(6);
    for (std::size_t k = 0; k < chosen.size(); ++k) chosen[k] = k;
    std::shuffle(chosen.begin(), chosen.end(), rng);
    chosen.resize(1 + pick(3));
    for (const std::size_t c : chosen) {
      if (c < 4) {
        const std::string name = "resource/b" + std::to_string(c);
        a how = std::array{a::read, a::write, a::read_write}[pick(3)];
        if (c != 3 && !written.contains(name)) how = a::write;
        written.insert(name);
        f.access(pass, buffer(c), how);
        out.uses.push_back({p, name, how, {}, false});
        continue;
      }
      const std::string name = "image/i" + std::to_string(c - 4);
      const std::uint32_t mip = static_cast<std::uint32_t>(pick(generated_mips));
      const std::string part = name + "@" + std::to_string(mip);
      const bool transfer = queue == queue_kind::transfer;
      a how = transfer ? std::array{a::transfer_src, a::transfer_dst}[pick(2)]
                       : std::array{a::sampled, a::storage_read, a::storage_write}[pick(3)];
      if (!written.contains(part)) how = transfer ? a::transfer_dst : a::storage_write;
      written.insert(part);
      f.access(pass, image(c - 4), how, {mip, 1, 0, 0});
      out.uses.push_back({p, name, how, {mip, 1, 0, 0}, true});
    }
  }
  result<plan> built = f.build();
  INFO((built ? std::string() : built.error().what()));
  REQUIRE(built.has_value());
  // hash() takes the same hash from the declarations, without the plan.
  CHECK(f.hash().value() == hash_plan(*built).value());
  out.built = std::move(*built);
  return out;
}

// For each pass, every pass it runs after through a path of `after`.
std::vector<std::set<std::size_t>> ancestors(const plan& p) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) index[p.nodes[i].id.str()] = i;
  std::vector<std::set<std::size_t>> up(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i)
    for (const node_id& d : p.nodes[i].after) {
      const std::size_t j = index.at(d.str());
      REQUIRE(j < i);
      up[i].insert(j);
      up[i].insert(up[j].begin(), up[j].end());
    }
  return up;
}

bool generated_conflict(const plan& p, const generated_use& x, const generated_use& y) {
  // Across queues an image's hazards are the whole image's (queue_order).
  const bool same_queue = p.nodes[x.pass].queue == p.nodes[y.pass].queue;
  if (x.resource != y.resource || (same_queue && x.range.base_mip != y.range.base_mip)) return false;
  if (access_writes(x.how) || access_writes(y.how)) return true;
  return x.image && p.nodes[x.pass].queue != p.nodes[y.pass].queue && layout_of(x.how) != layout_of(y.how);
}

}  // namespace

TEST_CASE("frame builder: generated frames order every conflict, list no implied 'after', compile",
          "[frame_builder][generated]") {
  std::mt19937_64 rng(4055);
  for (int round = 0; round < 30; ++round) {
    INFO("round " << round);
    const generated_frame g = generate_frame(rng, 2 + static_cast<std::size_t>(rng() % 14));
    const plan& p = g.built;
    const auto up = ancestors(p);
    for (const generated_use& x : g.uses)
      for (const generated_use& y : g.uses)
        if (x.pass < y.pass && generated_conflict(p, x, y)) {
          INFO(p.nodes[y.pass].id.str() << " after " << p.nodes[x.pass].id.str() << " for " << x.resource);
          CHECK(up[y.pass].contains(x.pass));
        }
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < p.nodes.size(); ++i) index[p.nodes[i].id.str()] = i;
    for (std::size_t i = 0; i < p.nodes.size(); ++i)
      for (const node_id& d : p.nodes[i].after)
        for (const node_id& other : p.nodes[i].after)
          CHECK_FALSE(up[index.at(other.str())].contains(index.at(d.str())));
    CHECK(hash_plan(parse_plan(write_plan_json(p)).value()).value() == hash_plan(p).value());
    CHECK(test::compile_ok(p).buckets.size() == 1);
  }
}
