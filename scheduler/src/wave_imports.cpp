// wave_imports.cpp — a wave's imported buffers and images (wave_imports.hpp).
#include "wave_imports.hpp"

#include "ferrum/binding/image_access.hpp"
#include "ferrum/scheduler/buffer_usage.hpp"
#include "ferrum/scheduler/lane_image_placement.hpp"

#include <algorithm>
#include <new>
#include <optional>
#include <string>

namespace ferrum::detail {
namespace {

using named_entries = boost::container::static_vector<std::size_t, max_wave_imports + max_wave_images>;

// "wave_request::imports", "wave_request::images[2]", and with the resource
// the entry names.
std::string field_name(const char* field) { return std::string("wave_request::") + field; }
std::string entry_name(const char* field, std::size_t i) { return field_name(field) + "[" + std::to_string(i) + "]"; }
std::string entry_name(const char* field, std::size_t i, std::string_view resource) {
  return entry_name(field, i) + " (resource " + quote_text(resource) + ")";
}

// Per resource of `ids` (recipe order; the plan imports `count` of them,
// `ids` holds the first `most`), the entry of `given` naming it
// (given.entries.size(): none). Errors: invalid_wave_request (more than
// `most` entries or resources, an entry naming no resource of `ids` or one
// named before, entries on a scheduler over several devices).
template <class Copied, class Ids>
result<named_entries> match_entries(const Copied& given, const Ids& ids, std::size_t count, const char* field,
                                    const char* what, std::size_t most, const gpu::device* device) {
  if (!given.kept())
    return make_error(errc::invalid_wave_request, field_name(field) + " has " + std::to_string(given.given) + " " +
                                                      what + "s; a wave holds at most " + std::to_string(most));
  if (given.given != 0 && device == nullptr)
    return make_error(errc::invalid_wave_request, field_name(field) +
                                                      " on a scheduler over several devices, where a wave's "
                                                      "device is known only once it runs");
  if (count > most)
    return make_error(errc::invalid_wave_request, "the plan imports " + std::to_string(count) + " " + what +
                                                      "s; a wave holds at most " + std::to_string(most));
  named_entries named(ids.size(), given.entries.size());
  for (std::size_t i = 0; i < given.entries.size(); ++i) {
    const std::string_view id = given.entries[i].id();
    const auto it = std::find(ids.begin(), ids.end(), id);
    if (it == ids.end())
      return make_error(errc::invalid_wave_request, entry_name(field, i) + " names " + quote_text(id) +
                                                        ", which is no " + "imported " + what + " of the plan");
    std::size_t& slot = named[static_cast<std::size_t>(it - ids.begin())];
    if (slot != given.entries.size())
      return make_error(errc::invalid_wave_request, entry_name(field, i) + " names " + quote_text(id) + ", which " +
                                                        entry_name(field, slot) + " names too");
    slot = i;
  }
  return named;
}

std::string describe(const gpu::image_spec& s) {
  return std::string(to_string(s.format)) + " " + std::to_string(s.width) + "x" + std::to_string(s.height) + ", " +
         std::to_string(s.mips) + " mips, " + std::to_string(s.layers) + " layers";
}

// What differs between the image a wave names (`has`) and the one its
// resource takes in `bucket` (`want`), the first difference found: format,
// extent, mips, layers, then the usage the plan's accesses need; none
// when it fits.
std::optional<std::string> misfit(const gpu::image_spec& want, const gpu::image_spec& has, const bucket_id& bucket) {
  const auto differs = [&](const char* what, const std::string& given, const std::string& expected) {
    return std::optional<std::string>(std::string(what) + " " + given + ", and bucket " + quote_text(bucket.str()) +
                                      " takes " + expected + " (a " + describe(has) +
                                      " image; the resource: " + describe(want) + ")");
  };
  const auto extent = [](const gpu::image_spec& s) { return std::to_string(s.width) + "x" + std::to_string(s.height); };
  if (has.format != want.format)
    return differs("format", quote_text(to_string(has.format)), quote_text(to_string(want.format)));
  if (has.width != want.width || has.height != want.height) return differs("extent", extent(has), extent(want));
  if (has.mips != want.mips) return differs("mips", std::to_string(has.mips), std::to_string(want.mips));
  if (has.layers != want.layers) return differs("layers", std::to_string(has.layers), std::to_string(want.layers));
  if (const std::uint32_t missing = want.usage & ~has.usage; missing != 0)
    return std::optional<std::string>("usage " + gpu::image_usage_names(has.usage) + " lacks " +
                                      gpu::image_usage_names(missing) + ", which the plan's accesses of it need (" +
                                      gpu::image_usage_names(want.usage) + ")");
  return std::nullopt;
}

// The usage the plan's accesses of `r` need, against the buffer's `has`:
// buffer_usage_missing naming the usage lacking and an access needing it.
template <class Where>
result<void> check_usage(const lane_import& r, std::uint32_t has, const Where& where) {
  const std::uint32_t lacking = buffer_usage_of(r) & ~has;
  if (lacking == 0) return {};
  for (unsigned a = 0; a <= static_cast<unsigned>(last_resource_access); ++a) {
    const auto access = static_cast<resource_access>(a);
    const bool compute = (r.accesses & (1u << a)) != 0;
    const bool transfer = (r.transfer_accesses & (1u << a)) != 0;
    const std::uint32_t needed = (compute ? buffer_usage_of(access, queue_kind::compute) : 0) |
                                 (transfer ? buffer_usage_of(access, queue_kind::transfer) : 0);
    if ((needed & lacking) == 0) continue;
    return make_error(errc::buffer_usage_missing,
                      where() + ": the buffer lacks " + gpu::buffer_usage_names(needed & lacking) +
                          " usage, which the plan's access " + quote_text(to_string(access)) +
                          (transfer && !compute ? " on the transfer queue" : "") + " needs (it has " +
                          gpu::buffer_usage_names(has) + ")");
  }
  return {};
}

// Whether the queues of the live nodes that use the resource of
// (`domain`, `member`) all take an object shared with the queue kinds
// `shared` (arena::queues, image::queues): import_not_shared naming the
// first node that runs on another, and the queues the object is shared
// with.
// `used`: node_placement::used's entry for it.
template <class Where>
result<void> check_shared(std::uint32_t shared, std::uint32_t used, std::size_t domain, std::size_t member,
                          const node_placement& nodes, const lane_recipe& recipe, const Where& where) {
  if ((used & ~shared) == 0) return {};
  for (std::size_t n = 0; n < nodes.queues.size(); ++n) {
    const queue_kind kind = nodes.queues[n];
    if ((shared & queue_bit(kind)) != 0 || nodes.program->culled(n)) continue;
    for (const lane_use& u : recipe.node_uses(n))
      if (u.domain == domain && u.member == member)
        return make_error(errc::import_not_shared,
                          where() + ": node " + std::to_string(n) + " runs on the device's " +
                              quote_text(to_string(kind)) + " queue, of a family the engine did not share it with (" +
                              (shared == 0 ? std::string("none of the device's queues")
                                           : "only the " + queue_kind_names(shared) + " queues") +
                              "); make it VK_SHARING_MODE_CONCURRENT over their families (gpu::vulkan_sharing)");
  }
  return {};
}

result<void> resolve_buffers(const copied_imports& given, const lane_recipe& recipe, const bucket_id& bucket,
                             const gpu::device* device, const node_placement& nodes, wave_imports& out) {
  // The engine's buffers: the recipe's imported ones but history buffers.
  boost::container::static_vector<std::string_view, max_wave_imports> ids;
  std::size_t engine = 0;
  for (const lane_import& r : recipe.imports)
    if (r.history == history_role::none && ++engine <= ids.capacity()) ids.push_back(r.resource.view());
  if (recipe.imports.size() > max_wave_imports)
    return make_error(errc::invalid_wave_request, "the plan has " + std::to_string(recipe.imports.size()) +
                                                      " imported and history buffers; a wave holds at most " +
                                                      std::to_string(max_wave_imports));
  auto named = match_entries(given, ids, engine, "imports", "buffer", max_wave_imports, device);
  if (!named) return named.error();
  const std::size_t first = out.size();
  std::size_t k = 0;  // into named: the engine's buffers
  for (std::size_t i = 0; i < recipe.imports.size(); ++i) {
    const lane_import& r = recipe.imports[i];
    if (r.history != history_role::none) {
      out.push_back({{}, nullptr, {}, r.written, &r.resource, {}, r.history});
      continue;
    }
    const std::size_t e = (*named)[k++];
    if (e == given.entries.size())
      return make_error(errc::import_missing, "bucket " + quote_text(bucket.str()) + ": no buffer for resource " +
                                                  quote_text(r.resource.view()) + " in wave_request::imports");
    // The error's words only when there is one: a wave allocates nothing.
    const auto where = [&] { return entry_name("imports", e, r.resource.view()); };
    const gpu::arena_range range = given.entries[e].value.range;
    if (range.arena == nullptr) return make_error(errc::invalid_wave_request, where() + " has no arena");
    if (&range.arena->device() != device)
      return make_error(errc::foreign_object, where() + ": its arena belongs to device " +
                                                  quote_text(range.arena->device().name()) + ", the scheduler's is " +
                                                  quote_text(device->name()));
    if (range.offset > range.arena->size() || range.size > range.arena->size() - range.offset)
      return make_error(errc::range_out_of_bounds, where() + ": bytes [" + std::to_string(range.offset) + ", +" +
                                                       std::to_string(range.size) + ") of an arena of " +
                                                       std::to_string(range.arena->size()));
    if (range.size < r.size)
      return make_error(errc::import_too_small, where() + ": " + std::to_string(range.size) +
                                                    " bytes given, and bucket " + quote_text(bucket.str()) + " wants " +
                                                    std::to_string(r.size) +
                                                    " (the resource's bytes, not rounded up to its alignment)");
    if (auto ok = check_usage(r, range.arena->usage(), where); !ok) return ok.error();
    if (auto ok = check_shared(range.arena->queues(), nodes.used[i], r.domain, r.member, nodes, recipe, where); !ok)
      return ok.error();
    out.push_back({{range.arena, range.offset, static_cast<std::size_t>(r.size)}, nullptr, {}, r.written});
  }
  // Two resources in the same bytes: the plan's barriers would not see
  // their hazards. (A history buffer's copies are the scheduler's own.)
  const auto entry = [&](std::size_t at) {
    std::size_t engine_before = 0;
    for (std::size_t i = first; i < at; ++i) engine_before += out[i].history == history_role::none ? 1 : 0;
    return (*named)[engine_before];
  };
  for (std::size_t a = first; a < out.size(); ++a)
    for (std::size_t b = a + 1; b < out.size(); ++b) {
      const gpu::arena_range& x = out[a].range;
      const gpu::arena_range& y = out[b].range;
      if (x.arena != nullptr && x.arena == y.arena && (out[a].written || out[b].written) &&
          x.offset < y.offset + y.size && y.offset < x.offset + x.size)
        return make_error(errc::invalid_wave_request,
                          entry_name("imports", entry(a)) + " and [" + std::to_string(entry(b)) + "] (resources " +
                              quote_text(recipe.imports[a - first].resource.view()) + " and " +
                              quote_text(recipe.imports[b - first].resource.view()) +
                              ") overlap in one arena, and a node writes one of them");
    }
  return {};
}

// What a wave that finds recipe image `i` (an imported one) in `layout`
// does to it, from one walk of the transitions the compiler derived (the
// first from the layout the wave names): whether it writes it — a node's
// access writes or presents it, or the wave changes its layout (a
// transition to other than `layout`, or more than one); read in the layout
// it was handed in, it is not written — and the layout its last transition
// leaves it in.
struct image_effect {
  bool written = false;
  image_layout left = image_layout::undefined;
};
image_effect effect_on(const lane_recipe& recipe, std::size_t i, image_layout layout) {
  image_effect out{false, layout};
  for (unsigned a = 0; a <= static_cast<unsigned>(last_resource_access); ++a) {
    const auto access = static_cast<resource_access>(a);
    if (recipe.images[i].takes(access) && (access_writes(access) || access == resource_access::present))
      out.written = true;
  }
  std::size_t transitions = 0;
  for (const image_transition& t : recipe.transitions) {
    if (t.image != i) continue;
    if (++transitions > 1 || t.to != layout) out.written = true;
    out.left = t.to;
  }
  return out;
}

// The entry of history image `i`, its object given at the wave's turn: the
// current found undefined (a node writes it first), the previous in the
// layout the current's last use leaves (history_store::assign puts a copy
// reset in it too).
wave_import history_image(const lane_recipe& recipe, std::size_t i) {
  image_layout found = image_layout::undefined;
  if (recipe.images[i].history == history_role::previous)
    for (const history_pair& h : recipe.histories)
      if (h.image && h.previous == i) found = effect_on(recipe, h.current, image_layout::undefined).left;
  const image_effect effect = effect_on(recipe, i, found);
  return {{}, nullptr, found, effect.written, &recipe.images[i].resource, effect.left, recipe.images[i].history};
}

result<void> resolve_images(const copied_images& given, const lane_recipe& recipe, const bucket_id& bucket,
                            const gpu::device* device, const node_placement& nodes, wave_imports& out) {
  boost::container::static_vector<std::string_view, max_wave_images> ids;
  std::size_t all = 0;  // history images too
  for (std::size_t i = 0; i < recipe.images.size(); ++i) {
    if (!recipe.images[i].imported) continue;
    if (++all > max_wave_images)
      return make_error(errc::invalid_wave_request, "the plan has more than " + std::to_string(max_wave_images) +
                                                        " imported and history images; a wave holds at most " +
                                                        std::to_string(max_wave_images));
    if (recipe.images[i].history != history_role::none) continue;
    ids.push_back(recipe.images[i].resource.view());
  }
  auto named = match_entries(given, ids, ids.size(), "images", "image", max_wave_images, device);
  if (!named) return named.error();
  const std::size_t first = out.size();
  std::size_t k = 0;  // into named: the engine's images
  for (std::size_t i = 0; i < recipe.images.size(); ++i) {
    if (!recipe.images[i].imported) continue;
    if (recipe.images[i].history != history_role::none) {
      out.push_back(history_image(recipe, i));
      continue;
    }
    const lane_image& r = recipe.images[i];
    const std::size_t e = (*named)[k++];
    if (e == given.entries.size())
      return make_error(errc::import_missing, "bucket " + quote_text(bucket.str()) + ": no image for resource " +
                                                  quote_text(r.resource.view()) + " in wave_request::images");
    const auto where = [&] { return entry_name("images", e, r.resource.view()); };
    const imported_image& image = given.entries[e].value;
    if (image.image == nullptr) return make_error(errc::invalid_wave_request, where() + " has no image");
    if (&image.image->device() != device)
      return make_error(errc::foreign_object, where() + ": an image of device " +
                                                  quote_text(image.image->device().name()) + ", the scheduler's is " +
                                                  quote_text(device->name()));
    if (auto differs = misfit(lane_image_spec(r), image.image->spec(), bucket))
      return make_error(errc::invalid_image, where() + ": " + *differs);
    if (!gpu::usage_allows(image.image->spec().usage, image.layout))
      return make_error(errc::invalid_image, where() + ": layout " + quote_text(to_string(image.layout)) +
                                                 ", which an image without its usage is never in");
    if (auto ok = check_shared(image.image->queues(), nodes.used[recipe.imports.size() + i], r.domain, r.member, nodes,
                               recipe, where);
        !ok)
      return ok.error();
    for (std::size_t j = first; j < out.size(); ++j)
      if (out[j].image == image.image)
        return make_error(errc::invalid_wave_request,
                          where() + ": the image named for resource " + quote_text(out[j].resource->view()) + " too");
    const image_effect effect = effect_on(recipe, i, image.layout);
    out.push_back({{}, image.image, image.layout, effect.written, &r.resource, effect.left});
  }
  return {};
}

}  // namespace

std::vector<std::uint32_t> queues_using_imports(const lane_recipe& recipe, const node_placement& nodes) {
  std::vector<std::uint32_t> used(recipe.imports.size() + recipe.images.size(), 0);
  const auto entry = [&](std::size_t domain, std::size_t member) -> std::uint32_t* {
    for (std::size_t i = 0; i < recipe.imports.size(); ++i)
      if (recipe.imports[i].domain == domain && recipe.imports[i].member == member) return &used[i];
    for (std::size_t i = 0; i < recipe.images.size(); ++i)
      if (recipe.images[i].imported && recipe.images[i].domain == domain && recipe.images[i].member == member)
        return &used[recipe.imports.size() + i];
    return nullptr;
  };
  for (std::size_t n = 0; n < nodes.queues.size(); ++n) {
    if (nodes.program->culled(n)) continue;
    for (const lane_use& u : recipe.node_uses(n))
      if (std::uint32_t* kinds = entry(u.domain, u.member)) *kinds |= queue_bit(nodes.queues[n]);
  }
  return used;
}

result<wave_imports> resolve_imports(const copied_imports& buffers, const copied_images& images,
                                     const lane_recipe& recipe, const bucket_id& bucket, const gpu::device* device,
                                     const node_placement& nodes) {
  wave_imports out;
  if (auto ok = resolve_buffers(buffers, recipe, bucket, device, nodes, out); !ok) return ok.error();
  if (auto ok = resolve_images(images, recipe, bucket, device, nodes, out); !ok) return ok.error();
  return out;
}

std::uint64_t import_order::after(std::span<const wave_import> imports, const gpu::timeline& timeline) const noexcept {
  std::uint64_t wait = 0;
  for (const wave_import& i : imports)
    for (const entry& e : entries_)
      if (i.object() != nullptr && e.object == i.object() && e.first < i.last() && i.first() < e.last)
        wait = std::max({wait, e.written, i.written ? e.read : 0});
  wait = std::max(wait, floor_);
  return timeline.reached(wait) ? 0 : wait;
}

void import_order::record(std::span<const wave_import> imports, std::uint64_t value,
                          const gpu::timeline& timeline) noexcept {
  std::erase_if(entries_, [&](const entry& e) { return timeline.reached(std::max(e.written, e.read)); });
  for (const wave_import& i : imports) {
    if (i.object() == nullptr) continue;
    // One entry per range: a range that overlaps another is ordered by
    // both (after), each keeping its own last writer and reader.
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) {
      return e.object == i.object() && e.first == i.first() && e.last == i.last();
    });
    if (it == entries_.end()) {
      try {
        it = entries_.insert(entries_.end(), {i.object(), i.first(), i.last(), 0, 0});
      } catch (const std::bad_alloc&) {
        // No room to remember the range: every later wave waits for this one.
        floor_ = value;
        continue;
      }
    }
    (i.written ? it->written : it->read) = value;
  }
}

}  // namespace ferrum::detail
