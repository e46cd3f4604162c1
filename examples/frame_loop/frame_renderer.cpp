// examples/frame_loop/frame_renderer.cpp — the frame_loop example's kernels,
// the plan's shape it relies on, and its encoder.
#include "frame_renderer.hpp"

#include "frame_null_raster.hpp"
#include "frame_overlay.hpp"
#include "frame_raster.hpp"

#include "ferrum/gpu/vulkan_device.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace frame_loop {
namespace {

namespace gpu = ferrum::gpu;

// Node indices in the plan (checked by the constructor); the scheduler
// submits a wave's nodes in this order, each list after the ones before.
// With --present node/present comes last and records nothing: the
// scheduler's transition to present-src is its work; with --overlay
// node/overlay comes before it.
enum node : std::size_t {
  pattern_node = 0,
  draw_node = 1,
  readback_node = 2,
  blur_x_node = 3,
  blur_y_node = 4,
  tonemap_node = 5,
  output_node = 6,
  overlay_node = 7
};

constexpr std::string_view params_id = "resource/pattern.params";
constexpr std::string_view draw_params_id = "resource/draw.params";
constexpr std::string_view hdr_id = "image/frame.hdr";
constexpr std::string_view depth_id = "image/frame.depth";
constexpr std::string_view blurred_x_id = "image/frame.blurred_x";
constexpr std::string_view blurred_id = "image/frame.blurred";
constexpr std::string_view ldr_id = "image/frame.ldr";
constexpr std::string_view rgba8_id = "resource/frame.rgba8";
constexpr std::string_view draw_color_id = "resource/draw.color";
constexpr std::string_view draw_depth_id = "resource/draw.depth";
constexpr std::string_view mesh_id = "resource/mesh";
constexpr std::string_view present_id = "image/present";
// Each node, and what it must list: what its pass reads, then what it writes.
struct node_shape {
  std::string_view id;
  std::string_view resources[4];
};
constexpr node_shape frame_nodes[] = {{"node/pattern", {params_id, hdr_id}},
                                      {"node/draw", {draw_params_id, hdr_id, depth_id}},
                                      {"node/draw.readback", {hdr_id, depth_id, draw_color_id, draw_depth_id}},
                                      {"node/blur.x", {hdr_id, blurred_x_id}},
                                      {"node/blur.y", {blurred_x_id, blurred_id}},
                                      {"node/tonemap", {blurred_id, ldr_id}},
                                      {"node/output", {ldr_id, rgba8_id}}};
constexpr node_shape overlay_shape{"node/overlay", {present_id}};
constexpr node_shape present_shape{"node/present", {present_id}};
// The persistent read-back resources the host reads after a wave, and the
// node that writes each.
constexpr std::pair<std::string_view, std::size_t> read_back[] = {
    {rgba8_id, output_node}, {draw_color_id, readback_node}, {draw_depth_id, readback_node}};

constexpr std::string_view frame_class = "frame";

constexpr std::uint32_t blur_radius = 2;
constexpr float exposure = 1.0f;

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

void check_plan(const ferrum::plan& p, const ferrum::compiled_program& program, image_size size, bool overlay) {
  const auto wrong = [](const std::string& why) {
    return std::runtime_error("the plan is not a frame_loop plan: " + why);
  };
  std::vector<node_shape> shapes(std::begin(frame_nodes), std::end(frame_nodes));
  if (overlay) shapes.push_back(overlay_shape);
  if (overlay || p.nodes.size() > shapes.size()) shapes.push_back(present_shape);
  if (p.nodes.size() != shapes.size())
    throw wrong(overlay ? "it must have nine nodes, node/overlay and node/present last (--overlay)"
                        : "it must have seven nodes, or eight with node/present");
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ferrum::plan_node& n = p.nodes[i];
    if (n.id.view() != shapes[i].id)
      throw wrong("node " + std::to_string(i) + " must be " + in_quotes(shapes[i].id) + ", not " +
                  in_quotes(n.id.view()));
    for (std::string_view id : shapes[i].resources)
      if (!id.empty() &&
          std::ranges::none_of(n.resources, [&](const ferrum::resource_id& r) { return r.view() == id; }))
        throw wrong(in_quotes(shapes[i].id) + " must list " + in_quotes(id));
  }
  // The host reads the outputs after their wave: only a persistent resource
  // keeps its bytes past its nodes ...
  for (const auto& [id, node] : read_back) {
    const auto output = std::ranges::find_if(p.resources, [&](const auto& r) { return r.id.view() == id; });
    if (output == p.resources.end() || output->lifetime != ferrum::allocation_lifetime::persistent)
      throw wrong(in_quotes(id) + " must be a persistent resource");
    // ... in memory the host reads (a v2 plan's pool declared "readback").
    for (const ferrum::pool_domain& d : program.domains)
      if (d.pool == output->pool && d.memory != ferrum::memory_class::readback)
        throw wrong(in_quotes(id) + "'s pool " + in_quotes(d.pool.view()) + " must be readback memory, not " +
                    std::string(ferrum::to_string(d.memory)));
  }
  for (const ferrum::compiled_bucket& bucket : program.buckets) {
    const auto& binding = bucket.binding;
    for (const auto& [index, bytes] : {std::pair{pattern_node, pattern_params_bytes}, {draw_node, draw_params_bytes}}) {
      const bool has_slot =
          binding != nullptr && std::ranges::any_of(binding->slots(), [&](const ferrum::binding_slot& s) {
            return s.node_index == index && s.capacity >= bytes;
          });
      if (!has_slot)
        throw wrong(in_quotes(frame_nodes[index].id) + " must own a binding slot of at least " + std::to_string(bytes) +
                    " bytes in bucket " + in_quotes(bucket.id.str()));
    }
  }
  // The kernels write whole images, the frame's: a bucket of exactly its
  // size runs it (plan_for_size makes one).
  const ferrum::bucket_capacity wanted{size.width, size.height, std::uint64_t{size.width} * size.height};
  if (std::ranges::none_of(program.buckets, [&](const ferrum::compiled_bucket& b) {
        return b.spec.cls.view() == frame_class && b.spec.dims == wanted;
      }))
    throw std::runtime_error("no bucket of frame_loop's plan is a frame of " + std::to_string(size.width) + "x" +
                             std::to_string(size.height) + ": make the plan for the frame's size (plan_for_size)");
}

// Node `c`'s image `id`, in the layout the node uses it in.
gpu::image_operand operand(const ferrum::encode_context& c, std::string_view id) {
  // Not null: check_plan made sure that every node lists its images.
  const ferrum::node_image& i = *c.image(id);
  return {i.image, i.layout};
}

}  // namespace

frame_renderer::frame_renderer(gpu::device& device, const ferrum::plan& p, const ferrum::compiled_program& program,
                               image_size size, channel_order order, const frame_overlay* overlay)
    : size_(size), order_(order), overlay_(overlay) {
  if (size.width == 0 || size.height == 0) throw std::runtime_error("the image size must not be 0");
  check_plan(p, program, size, overlay != nullptr);
  if (draws_natively(device) != (std::ranges::find(p.resources, mesh_id, [](const ferrum::resource_descriptor& r) {
                                   return r.id.view();
                                 }) != p.resources.end()))
    throw std::runtime_error("the plan is not made for this device: node/draw draws " +
                             std::string(draws_natively(device) ? "natively" : "by a kernel") +
                             " here (plan_for_size's raster)");
  if (!draws_natively(device) && gpu::native_handles(device))
    throw std::runtime_error(
        "node/draw needs a Vulkan device whose compute queue draws (graphics and dynamic "
        "rendering); this one's does not");
  pattern_ = device.create_kernel(pattern_kernel()).value();
  if (draws_natively(device)) {
    pipeline_ = std::make_unique<mesh_pipeline>(device);
    // The engine's mesh, the plan's resource/mesh in every wave.
    imports_[0] = {mesh_id, pipeline_->mesh()};
  } else {
    draw_ = device.create_kernel(null_color_kernel()).value();
    draw_depth_ = device.create_kernel(null_depth_kernel()).value();
  }
  blur_ = device.create_kernel(blur_kernel()).value();
  tonemap_ = device.create_kernel(tonemap_kernel()).value();
}

frame_renderer::~frame_renderer() = default;

bool frame_renderer::draws_natively(const gpu::device& device) noexcept {
  // The engine's pipeline is a Vulkan one.
  return device.limits().graphics && gpu::native_handles(device).has_value();
}

ferrum::wave_request frame_renderer::request() const noexcept {
  ferrum::wave_request r{frame_class, {size_.width, size_.height, pixels()}};
  if (pipeline_) r.imports = imports_;
  return r;
}

std::array<std::uint32_t, 2> frame_renderer::blur_push(blur_axis axis) const noexcept {
  return {blur_radius, static_cast<std::uint32_t>(axis)};
}

std::array<std::uint32_t, 2> frame_renderer::tonemap_push() const noexcept {
  return {std::bit_cast<std::uint32_t>(exposure), static_cast<std::uint32_t>(order_)};
}

std::vector<std::byte> frame_renderer::to_rgba(std::span<const std::byte> pixels) const {
  std::vector<std::byte> rgba(pixels.begin(), pixels.end());
  if (order_ == channel_order::bgra)
    for (std::size_t p = 0; p + rgba8_pixel_bytes <= rgba.size(); p += rgba8_pixel_bytes)
      std::swap(rgba[p], rgba[p + 2]);
  return rgba;
}

void frame_renderer::encode(const ferrum::encode_context& c, std::uint64_t frame,
                            const overlay_numbers* numbers) const {
  // The frame's parameters, in the wave's own bytes: the scheduler gave this
  // lane's slot to this wave alone, and the GPU reads it when the wave runs.
  if (c.node_index == pattern_node) store(params_of_frame(frame), c.binding->bytes());
  if (c.node_index == draw_node) store(draw_params_of_frame(frame, size_.width, size_.height), c.binding->bytes());
  // Replaying, the lane's lists still hold these passes over the same images
  // and slot, recorded by the lane's first frame (or by its last wave over
  // the same swapchain image): nothing to record.
  if (c.replay) return;
  // Each pass writes an image of its node and reads one that an earlier
  // node of the wave wrote, each in the layout the scheduler put it in.
  switch (c.node_index) {
    case pattern_node:
      c.commands.dispatch(*pattern_, operand(c, hdr_id), c.slot, {}).value();
      break;
    case draw_node:
      // The engine's pipeline, in the node's native scope, over the
      // attachments in the layouts and with the load and store ops the
      // plan gave them; on the null device the host's rasterizer.
      if (pipeline_) {
        pipeline_->draw(c.native().value(), *c.resource(mesh_id), *c.image(hdr_id), *c.image(depth_id), size_.width,
                        size_.height);
      } else {
        c.commands.dispatch(*draw_, operand(c, hdr_id), c.slot, {}).value();
        c.commands.dispatch(*draw_depth_, operand(c, depth_id), c.slot, {}).value();
      }
      break;
    case readback_node:
      // What node/draw drew, before any post-processing, for the check.
      for (const auto& [image, buffer] : {std::pair{hdr_id, draw_color_id}, {depth_id, draw_depth_id}}) {
        const gpu::image_operand from = operand(c, image);
        const ferrum::node_resource& to = *c.resource(buffer);
        const std::size_t bytes = pixels() * (image == hdr_id ? hdr_pixel_bytes : sizeof(float));
        c.commands.copy(*from.image, from.layout, {to.range.arena, to.range.offset, bytes}).value();
      }
      break;
    case blur_x_node:
      c.commands.dispatch(*blur_, operand(c, blurred_x_id), operand(c, hdr_id), blur_push(blur_axis::rows)).value();
      break;
    case blur_y_node:
      c.commands.dispatch(*blur_, operand(c, blurred_id), operand(c, blurred_x_id), blur_push(blur_axis::columns))
          .value();
      break;
    case tonemap_node:
      c.commands.dispatch(*tonemap_, operand(c, ldr_id), operand(c, blurred_id), tonemap_push()).value();
      break;
    case output_node: {
      // The frame into read-back memory; then, presenting, into the
      // swapchain image (the list orders the second copy after the first).
      const gpu::image_operand ldr = operand(c, ldr_id);
      const ferrum::node_resource& out = *c.resource(rgba8_id);
      const gpu::arena_range bytes{out.range.arena, out.range.offset, pixels() * rgba8_pixel_bytes};
      c.commands.copy(*ldr.image, ldr.layout, bytes).value();
      if (const ferrum::node_image* present = c.image(present_id))
        c.commands.copy(bytes, *present->image, present->layout).value();
      break;
    }
    case overlay_node:
      if (overlay_ != nullptr) {
        overlay_->draw(c, *c.image(present_id), size_.width, size_.height, frame,
                       numbers != nullptr ? *numbers : overlay_numbers{});
        break;
      }
      [[fallthrough]];
    default:
      // node/present: its opening barrier (present-src) is all it does.
      break;
  }
}

std::span<const std::byte> frame_renderer::output(const ferrum::lane_contents& lane, std::uint64_t wave) const {
  return read_back_bytes(lane, wave, rgba8_id, output_node, pixels() * rgba8_pixel_bytes);
}

drawn_frame frame_renderer::drawn(const ferrum::lane_contents& lane, std::uint64_t wave) const {
  return {read_back_bytes(lane, wave, draw_color_id, readback_node, pixels() * hdr_pixel_bytes),
          read_back_bytes(lane, wave, draw_depth_id, readback_node, pixels() * sizeof(float))};
}

std::span<const std::byte> frame_renderer::read_back_bytes(const ferrum::lane_contents& lane, std::uint64_t wave,
                                                           std::string_view id, std::size_t node,
                                                           std::size_t bytes) const {
  for (const ferrum::node_resource& r : lane.resources(node)) {
    if (r.id->view() != id) continue;
    // Readback memory (frame_loop.json): the host's copy.
    const std::span<const std::byte> held = r.bytes().value();
    if (held.size() >= bytes) return held.first(bytes);
  }
  throw std::logic_error("frame_loop: wave " + std::to_string(wave) + " left no " + std::string(id) + " of " +
                         std::to_string(size_.width) + "x" + std::to_string(size_.height) + " on its lane");
}

raster_reference frame_renderer::draw_raster_on_host(std::uint64_t frame) const {
  std::vector<std::byte> slot(pattern_params_bytes);
  std::vector<std::byte> hdr(pixels() * hdr_pixel_bytes);
  raster_reference reference{std::vector<float>(pixels() * 4), std::vector<float>(pixels(), 1.0f), {}};
  store(params_of_frame(frame), slot);
  const gpu::image_extent extent{size_.width, size_.height};
  pattern_kernel().cpu({hdr, slot, {}, extent, {}});
  draw_mesh_on_host(draw_params_of_frame(frame, size_.width, size_.height), extent, hdr, reference.depth,
                    &reference.edges);
  std::memcpy(reference.color.data(), hdr.data(), hdr.size());
  return reference;
}

std::vector<std::byte> frame_renderer::post_process_on_host(std::span<const std::byte> drawn_color) const {
  if (drawn_color.size() != pixels() * hdr_pixel_bytes)
    throw std::invalid_argument("frame_loop: a drawn color of " + std::to_string(drawn_color.size()) +
                                " bytes is not a frame of " + std::to_string(size_.width) + "x" +
                                std::to_string(size_.height));
  std::vector<std::byte> hdr(drawn_color.begin(), drawn_color.end());
  std::vector<std::byte> blurred_x(pixels() * hdr_pixel_bytes);
  std::vector<std::byte> blurred(pixels() * hdr_pixel_bytes);
  std::vector<std::byte> ldr(pixels() * rgba8_pixel_bytes);
  const gpu::image_extent extent{size_.width, size_.height};
  const auto rows_words = blur_push(blur_axis::rows);
  const auto columns_words = blur_push(blur_axis::columns);
  const auto tonemap_words = tonemap_push();
  blur_kernel().cpu({blurred_x, hdr, rows_words, extent, extent});
  blur_kernel().cpu({blurred, blurred_x, columns_words, extent, extent});
  tonemap_kernel().cpu({ldr, blurred, tonemap_words, extent, extent});
  return ldr;
}

host_frame frame_renderer::draw_on_host(std::uint64_t frame) const {
  // The device's passes, in its order, over images of the frame's size.
  std::vector<std::byte> slot(pattern_params_bytes);
  std::vector<std::byte> hdr(pixels() * hdr_pixel_bytes);
  std::vector<std::byte> blurred_x(pixels() * hdr_pixel_bytes);
  std::vector<std::byte> blurred(pixels() * hdr_pixel_bytes);
  host_frame drawn{std::vector<std::byte>(pixels() * rgba8_pixel_bytes), {}, 0};
  store(params_of_frame(frame), slot);
  const gpu::image_extent extent{size_.width, size_.height};
  const auto rows_words = blur_push(blur_axis::rows);
  const auto columns_words = blur_push(blur_axis::columns);
  const auto tonemap_words = tonemap_push();
  std::vector<std::uint8_t> edges;
  pattern_kernel().cpu({hdr, slot, {}, extent, {}});
  draw_mesh_on_host(draw_params_of_frame(frame, size_.width, size_.height), extent, hdr, {}, &edges);
  blur_kernel().cpu({blurred_x, hdr, rows_words, extent, extent});
  blur_kernel().cpu({blurred, blurred_x, columns_words, extent, extent});
  tonemap_kernel().cpu({drawn.pixels, blurred, tonemap_words, extent, extent});
  // The blur spreads an edge pixel over the pixels within its radius, in
  // both axes: each of those depends on where the edge fell.
  const auto width = static_cast<int>(size_.width);
  const auto height = static_cast<int>(size_.height);
  const auto radius = static_cast<int>(blur_radius);
  drawn.edges.assign(pixels(), 0);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (edges[static_cast<std::size_t>(y * width + x)] == 0) continue;
      for (int dy = std::max(0, y - radius); dy <= std::min(height - 1, y + radius); ++dy)
        for (int dx = std::max(0, x - radius); dx <= std::min(width - 1, x + radius); ++dx)
          drawn.edges[static_cast<std::size_t>(dy * width + dx)] = 1;
    }
  }
  drawn.edge_pixels = static_cast<std::size_t>(std::ranges::count(drawn.edges, std::uint8_t{1}));
  return drawn;
}

}  // namespace frame_loop
