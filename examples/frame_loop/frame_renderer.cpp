// examples/frame_loop/frame_renderer.cpp — the frame_loop example's kernels,
// lane images and encoder.
#include "frame_renderer.hpp"

#include "frame_kernels.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace frame_loop {
namespace {

// Node indices in the plan (checked by the constructor); the scheduler
// submits a wave's nodes in this order, each list after the ones before.
enum node : std::size_t { pattern_node = 0, blur_node = 1, tonemap_node = 2 };
constexpr const char* node_ids[] = {"node/pattern", "node/blur", "node/tonemap"};

constexpr std::uint32_t blur_radius = 2;
constexpr float exposure = 1.0f;

void check_plan(const ferrum::plan& p, const ferrum::compiled_program& program) {
  const auto wrong = [](const std::string& why) {
    return std::runtime_error("the plan is not a frame_loop plan: " + why);
  };
  if (program.buckets.size() != 1) throw wrong("it must have exactly one bucket");
  if (p.nodes.size() != std::size(node_ids)) throw wrong("it must have exactly three nodes");
  for (std::size_t i = 0; i < p.nodes.size(); ++i)
    if (p.nodes[i].id.str() != node_ids[i])
      throw wrong("node " + std::to_string(i) + " must be '" + node_ids[i] + "', not '" + p.nodes[i].id.str() + "'");
  const auto& binding = program.buckets.front().binding;
  const bool has_slot = binding != nullptr && std::ranges::any_of(binding->slots(), [](const ferrum::binding_slot& s) {
                          return s.node_index == pattern_node && s.capacity >= pattern_params_bytes;
                        });
  if (!has_slot)
    throw wrong("node/pattern must own a binding slot of at least " + std::to_string(pattern_params_bytes) + " bytes");
}

}  // namespace

frame_renderer::frame_renderer(ferrum::gpu::device& device, const ferrum::plan& p,
                               const ferrum::compiled_program& program, image_size size)
    : size_(size) {
  check_plan(p, program);
  if (size.width == 0 || size.height == 0) throw std::runtime_error("the image size must not be 0");
  pattern_ = device.create_kernel(pattern_kernel()).value();
  blur_ = device.create_kernel(blur_kernel()).value();
  tonemap_ = device.create_kernel(tonemap_kernel()).value();
  const std::size_t pixels = std::size_t{size.width} * size.height;
  for (std::uint32_t lane = 0; lane < program.lanes; ++lane) {
    lanes_.push_back({device.create_arena(pixels * hdr_pixel_bytes).value(),
                      device.create_arena(pixels * hdr_pixel_bytes).value(),
                      device.create_arena(pixels * rgba8_pixel_bytes).value()});
  }
}

std::array<std::uint32_t, 2> frame_renderer::pattern_push() const noexcept { return {size_.width, size_.height}; }

std::array<std::uint32_t, 3> frame_renderer::blur_push() const noexcept {
  return {size_.width, size_.height, blur_radius};
}

std::array<std::uint32_t, 1> frame_renderer::tonemap_push() const noexcept {
  return {std::bit_cast<std::uint32_t>(exposure)};
}

void frame_renderer::encode(const ferrum::encode_context& c, std::uint64_t frame) const {
  const lane_images& images = lanes_.at(c.lane);
  // The frame's parameters, in the wave's own bytes: the scheduler gave this
  // lane's slot to this wave alone, and the GPU reads it when the wave runs.
  if (c.node_index == pattern_node) store(params_of_frame(frame), c.binding->bytes());
  // Replaying, the lane's lists still hold these passes over the same images
  // and slot, recorded by the lane's first frame: nothing to record.
  if (c.replay) return;
  switch (c.node_index) {
    case pattern_node:
      c.commands.dispatch(*pattern_, images.hdr->whole(), c.slot, pattern_push()).value();
      break;
    case blur_node:
      c.commands.dispatch(*blur_, images.blurred->whole(), images.hdr->whole(), blur_push()).value();
      break;
    case tonemap_node:
      c.commands.dispatch(*tonemap_, images.rgba8->whole(), images.blurred->whole(), tonemap_push()).value();
      break;
    default:
      throw std::logic_error("frame_loop: no pass for node " + std::to_string(c.node_index));
  }
}

std::span<const std::byte> frame_renderer::output(std::uint32_t lane) const { return lanes_.at(lane).rgba8->bytes(); }

std::vector<std::byte> frame_renderer::draw_on_host(std::uint64_t frame) const {
  const std::size_t pixels = std::size_t{size_.width} * size_.height;
  std::vector<std::byte> slot(pattern_params_bytes);
  std::vector<std::byte> hdr(pixels * hdr_pixel_bytes);
  std::vector<std::byte> blurred(pixels * hdr_pixel_bytes);
  std::vector<std::byte> rgba8(pixels * rgba8_pixel_bytes);
  store(params_of_frame(frame), slot);
  const auto pattern_words = pattern_push();
  const auto blur_words = blur_push();
  const auto tonemap_words = tonemap_push();
  pattern_kernel().cpu({hdr, slot, pattern_words});
  blur_kernel().cpu({blurred, hdr, blur_words});
  tonemap_kernel().cpu({rgba8, blurred, tonemap_words});
  return rgba8;
}

}  // namespace frame_loop
