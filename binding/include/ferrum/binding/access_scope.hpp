// ferrum/binding/access_scope.hpp — the pipeline stages and memory accesses
// each declared resource_access makes (ferrum/sync_scope.hpp), by where the
// node runs: what a barrier before or after it must name (docs/design.md,
// "Barriers").
//
//   ferrum::sync_scope s = ferrum::access_scope(resource_access::sampled, ferrum::node_stages::drawing);
//   // s.stages: vertex-shader|fragment-shader|compute-shader, s.accesses: sampled-read
#pragma once

#include "ferrum/binding/plan.hpp"
#include "ferrum/sync_scope.hpp"

#include <span>

namespace ferrum {

struct lane_use;

// Where a node's commands run: the transfer queue (copies and fills alone),
// the compute queue (dispatches, copies and fills), or the compute queue's
// graphics pipeline (a node that draws: an attachment, vertex or index
// access; its native commands may dispatch and copy too).
enum class node_stages : std::uint8_t { transfer, compute, drawing };

// The stages and accesses `a` makes on a node of `where`. A buffer's read,
// write and read_write on the compute queue take the transfer stage besides
// the compute shader's: an encoder may copy or fill what it declares so.
[[nodiscard]] constexpr sync_scope access_scope(resource_access a, node_stages where) noexcept {
  using namespace ferrum::stages;
  namespace acc = ferrum::accesses;
  if (where == node_stages::transfer) {
    access_mask m = 0;
    if (a != resource_access::write && a != resource_access::transfer_dst) m |= acc::transfer_read;
    if (a != resource_access::read && a != resource_access::transfer_src) m |= acc::transfer_write;
    return {transfer, m};
  }
  // The shader stages a node's shaders run in.
  const stage_mask shaders = where == node_stages::drawing ? draw_shaders | compute_shader : compute_shader;
  switch (a) {
    case resource_access::read:
      return {shaders | transfer, acc::storage_read | acc::transfer_read};
    case resource_access::write:
      return {shaders | transfer, acc::storage_write | acc::transfer_write};
    case resource_access::read_write:
      return {shaders | transfer, acc::storage_read | acc::storage_write | acc::transfer_read | acc::transfer_write};
    case resource_access::sampled:
      return {shaders, acc::sampled_read};
    case resource_access::storage_read:
      return {shaders, acc::storage_read};
    case resource_access::storage_write:
      return {shaders, acc::storage_write};
    case resource_access::storage_read_write:
      return {shaders, acc::storage_read | acc::storage_write};
    case resource_access::color_attachment:
      return {color_attachment_output, acc::color_read | acc::color_write};
    case resource_access::depth_attachment:
      return {fragment_tests, acc::depth_read | acc::depth_write};
    case resource_access::depth_read:
      return {fragment_tests, acc::depth_read};
    case resource_access::transfer_src:
      return {transfer, acc::transfer_read};
    case resource_access::transfer_dst:
      return {transfer, acc::transfer_write};
    case resource_access::present:
      return {};  // presentation waits on the wave's semaphore, not on a barrier
    case resource_access::vertex:
      return {vertex_input, acc::vertex_read};
    case resource_access::index:
      return {vertex_input, acc::index_read};
    case resource_access::indirect:
      return {draw_indirect, acc::indirect_read};
    case resource_access::uniform:
      return {shaders, acc::uniform_read};
  }
  return {all, acc::all};
}

// Where a node with these uses on `queue` runs (node_stages).
[[nodiscard]] node_stages stages_of(std::span<const lane_use> uses, queue_kind queue) noexcept;

}  // namespace ferrum
