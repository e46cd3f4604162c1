// wave_imports.cpp — a wave's imported buffers (wave_imports.hpp).
#include "wave_imports.hpp"

#include <algorithm>
#include <new>
#include <string>

namespace ferrum::detail {
namespace {

std::string entry_name(std::size_t i) { return "wave_request::imports[" + std::to_string(i) + "]"; }

}  // namespace

result<wave_imports> resolve_imports(const copied_imports& given, const lane_recipe& recipe, const bucket_id& bucket,
                                     const gpu::device* device) {
  if (!given.kept())
    return make_error(errc::invalid_wave_request, "wave_request::imports has " + std::to_string(given.given) +
                                                      " buffers; a wave holds at most " +
                                                      std::to_string(max_wave_imports));
  if (given.given != 0 && device == nullptr)
    return make_error(errc::invalid_wave_request,
                      "wave_request::imports on a scheduler over several devices, where a wave's device is known "
                      "only once it runs");
  if (recipe.imports.size() > max_wave_imports)
    return make_error(errc::invalid_wave_request, "the plan imports " + std::to_string(recipe.imports.size()) +
                                                      " resources; a wave holds at most " +
                                                      std::to_string(max_wave_imports));
  // Per imported resource (recipe order), the entry naming it.
  boost::container::static_vector<std::size_t, max_wave_imports> named(recipe.imports.size(), given.entries.size());
  for (std::size_t i = 0; i < given.entries.size(); ++i) {
    const copied_imports::entry& e = given.entries[i];
    const auto it = std::find_if(recipe.imports.begin(), recipe.imports.end(),
                                 [&](const lane_import& r) { return r.resource.view() == e.id(); });
    if (it == recipe.imports.end())
      return make_error(errc::invalid_wave_request,
                        entry_name(i) + " names " + quote_text(e.id()) + ", which is no imported resource of the plan");
    std::size_t& slot = named[static_cast<std::size_t>(it - recipe.imports.begin())];
    if (slot != given.entries.size())
      return make_error(errc::invalid_wave_request,
                        entry_name(i) + " names " + quote_text(e.id()) + ", which " + entry_name(slot) + " names too");
    slot = i;
  }
  wave_imports out;
  for (std::size_t k = 0; k < recipe.imports.size(); ++k) {
    const lane_import& r = recipe.imports[k];
    if (named[k] == given.entries.size())
      return make_error(errc::import_missing, "bucket " + quote_text(bucket.str()) + ": no buffer for resource " +
                                                  quote_text(r.resource.view()) + " in wave_request::imports");
    // The error's words only when there is one: a wave allocates nothing.
    const auto where = [&] { return entry_name(named[k]) + " (resource " + quote_text(r.resource.view()) + ")"; };
    const gpu::arena_range range = given.entries[named[k]].range;
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
      return make_error(errc::import_too_small, where() + ": " + std::to_string(range.size) + " bytes, and bucket " +
                                                    quote_text(bucket.str()) + " needs " + std::to_string(r.size));
    out.push_back({{range.arena, range.offset, static_cast<std::size_t>(r.size)}, r.written});
  }
  // Two resources in the same bytes: the plan's barriers would not see
  // their hazards.
  for (std::size_t a = 0; a < out.size(); ++a)
    for (std::size_t b = a + 1; b < out.size(); ++b) {
      const gpu::arena_range& x = out[a].range;
      const gpu::arena_range& y = out[b].range;
      if (x.arena == y.arena && (out[a].written || out[b].written) && x.offset < y.offset + y.size &&
          y.offset < x.offset + x.size)
        return make_error(errc::invalid_wave_request, entry_name(named[a]) + " and " + entry_name(named[b]) +
                                                          " (resources " +
                                                          quote_text(recipe.imports[a].resource.view()) + " and " +
                                                          quote_text(recipe.imports[b].resource.view()) +
                                                          ") overlap in one arena, and a node writes one of them");
    }
  return out;
}

std::uint64_t import_order::after(std::span<const wave_import> imports, const gpu::timeline& timeline) const noexcept {
  std::uint64_t wait = 0;
  for (const wave_import& i : imports)
    for (const entry& e : entries_)
      if (e.arena == i.range.arena) wait = std::max({wait, e.written, i.written ? e.read : 0});
  wait = std::max(wait, floor_);
  return timeline.reached(wait) ? 0 : wait;
}

void import_order::record(std::span<const wave_import> imports, std::uint64_t value,
                          const gpu::timeline& timeline) noexcept {
  std::erase_if(entries_, [&](const entry& e) { return timeline.reached(std::max(e.written, e.read)); });
  for (const wave_import& i : imports) {
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) { return e.arena == i.range.arena; });
    if (it == entries_.end()) {
      try {
        it = entries_.insert(entries_.end(), {i.range.arena, 0, 0});
      } catch (const std::bad_alloc&) {
        // No room to remember the buffer: every later wave waits for this one.
        floor_ = value;
        continue;
      }
    }
    (i.written ? it->written : it->read) = value;
  }
}

}  // namespace ferrum::detail
