// sync_scope.cpp — the names of ferrum/sync_scope.hpp's stages and accesses.
#include "ferrum/sync_scope.hpp"

#include <array>
#include <string_view>

namespace ferrum {
namespace {

constexpr std::array<std::string_view, stages::count> stage_bit_names{"draw-indirect",
                                                                      "vertex-input",
                                                                      "vertex-shader",
                                                                      "fragment-shader",
                                                                      "early-fragment-tests",
                                                                      "late-fragment-tests",
                                                                      "color-attachment-output",
                                                                      "compute-shader",
                                                                      "transfer",
                                                                      "host"};
constexpr std::array<std::string_view, accesses::count> access_bit_names{
    "indirect-read", "index-read",    "vertex-read",    "uniform-read", "sampled-read",
    "storage-read",  "storage-write", "color-read",     "color-write",  "depth-read",
    "depth-write",   "transfer-read", "transfer-write", "host-read",    "host-write"};

template <std::size_t N>
std::string names(std::uint32_t mask, std::uint32_t all, const std::array<std::string_view, N>& bit_names) {
  if (mask == 0) return "none";
  if ((mask & all) == all) return "all";
  std::string out;
  for (std::size_t bit = 0; bit < N; ++bit) {
    if ((mask & (1U << bit)) == 0) continue;
    if (!out.empty()) out += '|';
    out += bit_names[bit];
  }
  return out;
}

}  // namespace

std::string stage_mask_names(stage_mask mask) { return names(mask, stages::all, stage_bit_names); }
std::string access_mask_names(access_mask mask) { return names(mask, accesses::all, access_bit_names); }
std::string scope_text(const sync_scope& s) {
  if (s.stages == 0 && s.accesses == 0) return "nothing";
  return stage_mask_names(s.stages) + ' ' + access_mask_names(s.accesses);
}
std::string scope_text(const barrier_scope& b) { return scope_text(b.before) + " -> " + scope_text(b.after); }

}  // namespace ferrum
