// frame_order: the `after` of a frame's passes, from their accesses
// (frame_builder.hpp). A pass runs after every earlier pass whose access of
// a resource conflicts with one of its own: either writes, on parts of an
// image that overlap; across queues, where queue_order.cpp requires a path
// of `after` between them, on any parts of it, and also an image needed in
// two layouts. Of those, the ones another
// of them already runs after are left out, so that the plan lists what a
// careful author would. It works in the storage of a frame_order, which a
// builder keeps: the same frame again derives with no allocation.
#include "frame_builder_state.hpp"

#include "ferrum/binding/image_access.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ferrum {
namespace {

using earlier_use = frame_order::earlier_use;

// The mip levels and layers [first, end) a range reaches, its counts of 0
// resolved against the image (a buffer's: all of [0, 1)), in `e`.
void reach_of(const frame_builder::state::resource& r, const subresource_range& range, earlier_use& e) {
  e.mip = 0, e.mip_end = 1, e.layer = 0, e.layer_end = 1;
  if (!r.image) return;
  const image_desc& image = r.picture.image;
  const auto end = [](std::uint32_t base, std::uint32_t count, std::uint32_t total) {
    return count != 0 ? base + count : std::max(total, base + 1);
  };
  e = {e.pass,
       e.queue,
       e.how,
       range.base_mip,
       end(range.base_mip, range.mips, image.mips),
       range.base_layer,
       end(range.base_layer, range.layers, image.layers),
       e.next};
}

bool reaches_overlap(const earlier_use& a, const earlier_use& b) noexcept {
  return a.mip < b.mip_end && b.mip < a.mip_end && a.layer < b.layer_end && b.layer < a.layer_end;
}

bool uses_conflict(bool image, const earlier_use& a, queue_kind queue, resource_access b) noexcept {
  if (access_writes(a.how) || access_writes(b)) return true;
  return image && a.queue != queue && layout_of(a.how) != layout_of(b);
}

std::string order_pass_name(const frame_builder::state& s, std::uint32_t i) { return node_id::quote(s.passes[i].name); }

}  // namespace

result<void> frame_builder::state::derive_after(frame_order& out) const {
  const std::size_t n = passes.size();
  out.head.assign(resources.size(), -1);
  out.uses.clear();
  out.offsets.assign(n + 1, 0);
  out.edges.clear();
  out.words = (n + 63) / 64;
  out.reach.assign(n * out.words, 0);  // every pass each one runs after, transitively
  const auto reach = [&](std::size_t i) { return out.reach.data() + i * out.words; };
  const auto has = [](const std::uint64_t* set, std::uint32_t k) { return (set[k / 64] >> (k % 64) & 1) != 0; };
  for (std::uint32_t i = 0; i < n; ++i) {
    const pass& p = passes[i];
    out.deps.clear();
    for (const use& u : p.uses) {
      const resource& r = resources[u.resource];
      earlier_use mine{i, p.queue, u.how, 0, 1, 0, 1, -1};
      reach_of(r, u.range, mine);
      for (std::int64_t k = out.head[u.resource]; k >= 0; k = out.uses[static_cast<std::size_t>(k)].next) {
        const earlier_use& e = out.uses[static_cast<std::size_t>(k)];
        if (e.pass != i && (e.queue != p.queue || reaches_overlap(e, mine)) &&
            uses_conflict(r.image, e, p.queue, u.how))
          out.deps.push_back(e.pass);
      }
    }
    for (const std::uint32_t e : p.after) {
      if (e == i)
        return make_error(errc::dependency_cycle,
                          "pass " + order_pass_name(*this, i) + " is declared to run after itself",
                          "/nodes/" + std::to_string(i) + "/after");
      if (e < i) out.deps.push_back(e);
    }
    std::sort(out.deps.begin(), out.deps.end());
    out.deps.erase(std::unique(out.deps.begin(), out.deps.end()), out.deps.end());
    // Latest first: a dependency a later one runs after is implied by it.
    std::uint64_t* mine = reach(i);
    const std::size_t first = out.edges.size();
    for (auto d = out.deps.rbegin(); d != out.deps.rend(); ++d) {
      if (has(mine, *d)) continue;
      out.edges.push_back(*d);
      mine[*d / 64] |= std::uint64_t{1} << (*d % 64);
      const std::uint64_t* theirs = reach(*d);
      for (std::size_t w = 0; w < out.words; ++w) mine[w] |= theirs[w];
    }
    std::reverse(out.edges.begin() + static_cast<std::ptrdiff_t>(first), out.edges.end());
    out.offsets[i + 1] = static_cast<std::uint32_t>(out.edges.size());
    for (const use& u : p.uses) {
      earlier_use e{i, p.queue, u.how, 0, 1, 0, 1, out.head[u.resource]};
      reach_of(resources[u.resource], u.range, e);
      out.head[u.resource] = static_cast<std::int64_t>(out.uses.size());
      out.uses.push_back(e);
    }
  }
  // An explicit `after` naming a later pass: a cycle where that pass runs
  // after this one already, else the plan's order rule (listed earlier).
  for (std::uint32_t i = 0; i < n; ++i)
    for (const std::uint32_t e : passes[i].after) {
      if (e <= i) continue;
      const std::string where = "/nodes/" + std::to_string(i) + "/after";
      if (has(reach(e), i))
        return make_error(errc::dependency_cycle,
                          "pass " + order_pass_name(*this, i) + " is declared to run after pass " +
                              order_pass_name(*this, e) +
                              ", which runs after it (through the resources they access, or 'after')",
                          where);
      return make_error(errc::dependency_not_earlier,
                        "pass " + order_pass_name(*this, i) + " is declared to run after pass " +
                            order_pass_name(*this, e) + ", which is declared after it: declare " +
                            order_pass_name(*this, e) + " first",
                        where);
    }
  return {};
}

}  // namespace ferrum
