// frame_order: the `after` of a frame's passes, from their accesses
// (frame_builder.hpp). A pass runs after every earlier pass whose access of
// a resource conflicts with one of its own: either writes, on parts of an
// image that overlap; across queues, where queue_order.cpp requires a path
// of `after` between them, on any parts of it, and also an image needed in
// two layouts. Of those, the ones another
// of them already runs after are left out, so that the plan lists what a
// careful author would.
#include "frame_builder_state.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ferrum {
namespace {

// Mip levels and layers [first, end) a range reaches, its counts of 0
// resolved against the image (a buffer's: all of [0, 1)).
struct reach_box {
  std::uint32_t mip = 0, mip_end = 1, layer = 0, layer_end = 1;

  [[nodiscard]] bool overlaps(const reach_box& o) const noexcept {
    return mip < o.mip_end && o.mip < mip_end && layer < o.layer_end && o.layer < layer_end;
  }
};

reach_box box_of(const frame_builder::state::resource& r, const subresource_range& range) {
  if (!r.image) return {};
  const image_desc& image = r.picture.image;
  const auto end = [](std::uint32_t base, std::uint32_t count, std::uint32_t total) {
    return count != 0 ? base + count : std::max(total, base + 1);
  };
  return {range.base_mip, end(range.base_mip, range.mips, image.mips), range.base_layer,
          end(range.base_layer, range.layers, image.layers)};
}

struct earlier_use {
  std::uint32_t pass;
  queue_kind queue;
  resource_access how;
  reach_box box;
};

bool uses_conflict(bool image, const earlier_use& a, queue_kind queue, resource_access b) noexcept {
  if (access_writes(a.how) || access_writes(b)) return true;
  return image && a.queue != queue && layout_of(a.how) != layout_of(b);
}

// A set of pass indices, one bit each.
class pass_set {
 public:
  explicit pass_set(std::size_t n) : words_((n + 63) / 64) {}
  void add(std::uint32_t i) { words_[i / 64] |= std::uint64_t{1} << (i % 64); }
  [[nodiscard]] bool has(std::uint32_t i) const { return (words_[i / 64] >> (i % 64) & 1) != 0; }
  void add_all(const pass_set& o) {
    for (std::size_t w = 0; w < words_.size(); ++w) words_[w] |= o.words_[w];
  }

 private:
  std::vector<std::uint64_t> words_;
};

std::string pass_name(const frame_builder::state& s, std::uint32_t i) { return node_id::quote(s.passes[i].name); }

}  // namespace

result<std::vector<std::vector<std::uint32_t>>> frame_builder::state::derive_after() const {
  const std::size_t n = passes.size();
  std::vector<std::vector<earlier_use>> by_resource(resources.size());
  std::vector<std::vector<std::uint32_t>> direct(n);
  std::vector<pass_set> reach(n, pass_set(n));  // every pass each one runs after, transitively
  std::vector<std::uint32_t> deps;
  for (std::uint32_t i = 0; i < n; ++i) {
    const pass& p = passes[i];
    deps.clear();
    for (const use& u : p.uses) {
      const resource& r = resources[u.resource];
      const reach_box box = box_of(r, u.range);
      for (const earlier_use& e : by_resource[u.resource])
        if (e.pass != i && (e.queue != p.queue || e.box.overlaps(box)) && uses_conflict(r.image, e, p.queue, u.how))
          deps.push_back(e.pass);
    }
    for (const std::uint32_t e : p.after) {
      if (e == i)
        return make_error(errc::dependency_cycle, "pass " + pass_name(*this, i) + " is declared to run after itself",
                          "/nodes/" + std::to_string(i) + "/after");
      if (e < i) deps.push_back(e);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    // Latest first: a dependency a later one runs after is implied by it.
    for (auto d = deps.rbegin(); d != deps.rend(); ++d) {
      if (reach[i].has(*d)) continue;
      direct[i].push_back(*d);
      reach[i].add(*d);
      reach[i].add_all(reach[*d]);
    }
    std::reverse(direct[i].begin(), direct[i].end());
    for (const use& u : p.uses)
      by_resource[u.resource].push_back({i, p.queue, u.how, box_of(resources[u.resource], u.range)});
  }
  // An explicit `after` naming a later pass: a cycle where that pass runs
  // after this one already, else the plan's order rule (listed earlier).
  for (std::uint32_t i = 0; i < n; ++i)
    for (const std::uint32_t e : passes[i].after) {
      if (e <= i) continue;
      const std::string where = "/nodes/" + std::to_string(i) + "/after";
      if (reach[e].has(i))
        return make_error(errc::dependency_cycle,
                          "pass " + pass_name(*this, i) + " is declared to run after pass " + pass_name(*this, e) +
                              ", which runs after it (through the resources they access, or 'after')",
                          where);
      return make_error(errc::dependency_not_earlier,
                        "pass " + pass_name(*this, i) + " is declared to run after pass " + pass_name(*this, e) +
                            ", which is declared after it: declare " + pass_name(*this, e) + " first",
                        where);
    }
  return direct;
}

}  // namespace ferrum
