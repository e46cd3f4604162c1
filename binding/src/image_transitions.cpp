#include "image_transitions.hpp"

#include "ferrum/binding/image_access.hpp"

#include "image_rules.hpp"

#include <algorithm>
#include <limits>

namespace ferrum::detail {
namespace {

// One image's subresources while a wave's uses are walked: the layout each
// is in and the access that left it (mip-major: level m of layer l is
// m * layers + l).
class image_cells {
 public:
  image_cells(std::uint32_t mips, std::uint32_t layers)
      : mips_(mips),
        layers_(layers),
        layout_(std::size_t{mips} * layers, image_layout::undefined),
        last_(layout_.size()) {}

  [[nodiscard]] subresource_range resolve(subresource_range r) const noexcept {
    return ferrum::resolve(r, mips_, layers_);
  }
  // `r` as a transition names it: {} for the whole image.
  [[nodiscard]] subresource_range normal(subresource_range r) const noexcept {
    return r == resolve({}) ? subresource_range{} : r;
  }

  [[nodiscard]] bool touched() const noexcept {
    return std::any_of(last_.begin(), last_.end(), [](const auto& a) { return a.has_value(); });
  }
  // The layout of the subresource the wave's last use left (touched()).
  [[nodiscard]] image_layout last_layout() const noexcept { return layout_[last_cell_]; }

  // Where a wave starts: each subresource undefined, but a persistent
  // image's touched ones, which hold what the last wave left (in the
  // layout its last use left: one for all, check_image_uses).
  void start(bool persistent) noexcept {
    for (std::size_t c = 0; c < layout_.size(); ++c)
      if (!persistent || !last_[c]) {
        layout_[c] = image_layout::undefined;
        last_[c].reset();
      }
  }

  // Calls `f(part, from, after)` for each part of `r` not in `to`, one per
  // run of subresources left alike: the layers of a level in runs, and
  // runs of consecutive levels alike merged.
  template <class F>
  void transitions(const subresource_range& r, image_layout to, F&& f) const {
    std::vector<std::pair<subresource_range, std::size_t>> open;  // a part and a cell of it
    std::vector<std::pair<subresource_range, std::size_t>> level;
    for (std::uint32_t m = r.base_mip; m < r.base_mip + r.mips; ++m) {
      level.clear();
      for (std::uint32_t l = r.base_layer; l < r.base_layer + r.layers;) {
        const std::size_t c = cell(m, l);
        std::uint32_t end = l + 1;
        while (end < r.base_layer + r.layers && alike(cell(m, end), c)) ++end;
        if (layout_[c] != to) level.push_back({{m, 1, l, end - l}, c});
        l = end;
      }
      for (const auto& run : level) {
        // (Named, not a structured binding: clang 14 cannot capture one.)
        const subresource_range& part = run.first;
        const std::size_t c = run.second;
        auto grows = std::find_if(open.begin(), open.end(), [&](const auto& o) {
          return o.first.base_mip + o.first.mips == m && o.first.base_layer == part.base_layer &&
                 o.first.layers == part.layers && alike(o.second, c);
        });
        if (grows != open.end())
          ++grows->first.mips;
        else
          open.push_back({part, c});
      }
    }
    for (const auto& [part, c] : open) f(part, layout_[c], last_[c]);
  }

  // The subresources of `r` are left in `l` by `a`.
  void leave(const subresource_range& r, image_layout l, resource_access a) noexcept {
    for (std::uint32_t m = r.base_mip; m < r.base_mip + r.mips; ++m)
      for (std::uint32_t y = r.base_layer; y < r.base_layer + r.layers; ++y) {
        layout_[cell(m, y)] = l;
        last_[cell(m, y)] = a;
        last_cell_ = cell(m, y);
      }
  }

 private:
  [[nodiscard]] std::size_t cell(std::uint32_t m, std::uint32_t l) const noexcept {
    return std::size_t{m} * layers_ + l;
  }
  [[nodiscard]] bool alike(std::size_t a, std::size_t b) const noexcept {
    return layout_[a] == layout_[b] && last_[a] == last_[b];
  }

  std::uint32_t mips_;
  std::uint32_t layers_;
  std::vector<image_layout> layout_;
  std::vector<std::optional<resource_access>> last_;
  std::size_t last_cell_ = 0;
};

}  // namespace

image_plan derive_image_transitions(const plan& p, const plan_index& index, const std::vector<pool_domain>& domains,
                                    const std::vector<wave_domain_layout>& layouts) {
  image_plan out;
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> image_of(p.resources.size(), none);
  for (std::size_t d = 0; d < domains.size(); ++d)
    for (std::size_t m = 0; m < domains[d].members.size(); ++m) {
      const std::size_t r = domains[d].members[m];
      const resource_descriptor& res = p.resources[r];
      if (!res.image) continue;
      image_of[r] = out.images.size();
      lane_image& image = out.images.emplace_back(lane_image{res.id, d, m, *res.image, res.lifetime});
      image.imported = domains[d].memory == memory_class::imported;
      if (domains[d].history) {
        // The scheduler's; it clears the image (transfer-dst) to reset it.
        image.history = res.history_of ? history_role::previous : history_role::current;
        image.accesses |= 1u << static_cast<unsigned>(resource_access::transfer_dst);
      }
      // An interval pool holds invocation resources only, each with its interval.
      if (domains[d].liveness == liveness_mode::interval) {
        image.aliasable = true;
        image.live = layouts[d].intervals[m];
      }
      out.resources.push_back(r);
    }
  out.transition_begin.assign(1, 0);
  if (out.images.empty()) {
    out.transition_begin.assign(p.nodes.size() + 1, 0);
    return out;
  }

  // Per image and subresource (mip-major, as image_cells), the layout and
  // the access the uses so far left.
  std::vector<image_cells> cells;
  cells.reserve(out.images.size());
  for (const lane_image& image : out.images) cells.emplace_back(image.image.mips, image.image.layers);

  // Each image's accesses, and where a persistent image starts: the layout
  // its last use in the wave leaves (the same for every subresource the
  // wave reaches: check_image_uses).
  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const auto uses = index.uses(n);
    for (std::size_t k = 0; k < uses.size(); ++k)
      if (const std::size_t i = image_of[uses[k]]; i != none) {
        const resource_access a = p.nodes[n].access_of(k);
        out.images[i].accesses |= 1u << static_cast<unsigned>(a);
        cells[i].leave(cells[i].resolve(p.nodes[n].range_of(k)), layout_of(a), a);
      }
  }
  for (std::size_t i = 0; i < out.images.size(); ++i) {
    if (out.images[i].lifetime == allocation_lifetime::persistent && cells[i].touched())
      out.images[i].initial = cells[i].last_layout();
    cells[i].start(out.images[i].lifetime == allocation_lifetime::persistent);
  }

  for (std::size_t n = 0; n < p.nodes.size(); ++n) {
    const std::size_t first = out.transitions.size();
    const auto uses = index.uses(n);
    for (std::size_t k = 0; k < uses.size(); ++k) {
      const std::size_t i = image_of[uses[k]];
      if (i == none) continue;
      const resource_access a = p.nodes[n].access_of(k);
      const subresource_range range = cells[i].resolve(p.nodes[n].range_of(k));
      cells[i].transitions(range, layout_of(a),
                           [&](subresource_range part, image_layout from, std::optional<resource_access> after) {
                             out.transitions.push_back({i, from, layout_of(a), after, a, cells[i].normal(part)});
                           });
      cells[i].leave(range, layout_of(a), a);
    }
    std::stable_sort(out.transitions.begin() + static_cast<std::ptrdiff_t>(first), out.transitions.end(),
                     [](const image_transition& x, const image_transition& y) { return x.image < y.image; });
    out.transition_begin.push_back(out.transitions.size());
  }
  return out;
}

result<void> place_images(lane_recipe& recipe, const image_plan& images, const plan& p, const bucket_capacity& dims) {
  recipe.images = images.images;
  for (std::size_t i = 0; i < recipe.images.size(); ++i) {
    auto extent = resolve_image_extent(p.resources[images.resources[i]], dims);
    if (!extent) return extent.error();
    image_desc& image = recipe.images[i].image;
    recipe.images[i].bucket_divisor = image.bucket_extent ? image.extent_divisor : 0;
    image.bucket_extent = false;
    image.extent_divisor = 1;
    image.width = extent->width;
    image.height = extent->height;
  }
  recipe.transitions = images.transitions;
  recipe.transition_begin = images.transition_begin;
  return {};
}

}  // namespace ferrum::detail
