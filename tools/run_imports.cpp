#include "run_imports.hpp"

#include <algorithm>

namespace ferrum::tools {

result<run_imports> run_imports::create(gpu::device& device, const compiled_program& program) {
  run_imports made;
  // Every bucket imports the same resources (their pools' classes are the
  // program's), each with its own size there.
  std::vector<std::pair<std::string_view, std::uint64_t>> sizes;
  for (const compiled_bucket& bucket : program.buckets)
    for (const lane_import& i : bucket.lane.imports) {
      auto it = std::find_if(sizes.begin(), sizes.end(), [&](const auto& s) { return s.first == i.resource.view(); });
      if (it == sizes.end()) it = sizes.insert(sizes.end(), {i.resource.view(), 0});
      it->second = std::max(it->second, i.size);
    }
  for (const auto& [id, size] : sizes) {
    // An arena takes at least a byte; a resource of none is named by an empty range of it.
    auto arena = device.create_arena(static_cast<std::size_t>(std::max<std::uint64_t>(size, 4)), memory_class::device);
    if (!arena) return arena.error();
    made.buffers_.push_back({id, (*arena)->range(0, static_cast<std::size_t>(size))});
    made.arenas_.push_back(std::move(*arena));
  }
  return made;
}

const gpu::arena* run_imports::find(std::string_view id) const noexcept {
  for (const imported_buffer& b : buffers_)
    if (b.resource == id) return b.range.arena;
  return nullptr;
}

}  // namespace ferrum::tools
