// examples/frame_loop/frame_null_raster.cpp — the null device's rasterizer
// of the torus (frame_null_raster.hpp).
#include "frame_null_raster.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace frame_loop {
namespace {

// Sub-pixel precision of the snapped positions: 8 bits, as lavapipe's and
// most GPUs' (Vulkan's subPixelPrecisionBits is at least 4).
constexpr std::int64_t subpixels = 256;

// A vertex after the vertex shader, the viewport transform and snapping.
struct snapped_vertex {
  std::int64_t x, y;            // 1/256 pixels
  float z;                      // depth in [0, 1]
  float w;                      // clip w
  std::array<float, 3> normal;  // the shader's view_normal
};

float row(const std::array<float, 4>& r, const mesh_vertex& v) noexcept {
  return r[0] * v.position[0] + r[1] * v.position[1] + r[2] * v.position[2] + r[3];
}

snapped_vertex snap(const draw_params& p, const mesh_vertex& v, float width, float height) noexcept {
  const float w = row(p.clip[3], v);
  const float x = (row(p.clip[0], v) / w * 0.5f + 0.5f) * width;
  const float y = (row(p.clip[1], v) / w * 0.5f + 0.5f) * height;
  std::array<float, 3> n{};
  for (std::size_t i = 0; i < 3; ++i)
    n[i] = p.model[i][0] * v.normal[0] + p.model[i][1] * v.normal[1] + p.model[i][2] * v.normal[2];
  return {std::llround(x * subpixels), std::llround(y * subpixels), row(p.clip[2], v) / w, w, n};
}

// Twice the signed area of (a, b, p), in 1/256^2 pixels: positive when p
// lies on the inside of the edge a -> b of a triangle wound (a, b, c) with
// a positive area.
std::int64_t edge(const snapped_vertex& a, const snapped_vertex& b, std::int64_t x, std::int64_t y) noexcept {
  return (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
}

// Vulkan's top-left rule (y down): a sample exactly on an edge is inside
// only for a left edge (going up) or a top edge (horizontal, going right).
bool top_left(const snapped_vertex& a, const snapped_vertex& b) noexcept {
  return b.y < a.y || (b.y == a.y && b.x > a.x);
}

void draw(const draw_params& params, ferrum::gpu::image_extent extent, std::span<std::byte> color,
          std::span<std::byte> depth_bytes) noexcept {
  const std::size_t pixels = std::size_t{extent.width} * extent.height;
  std::vector<float> depth(pixels, 1.0f);
  const std::span<const mesh_vertex> mesh = torus_mesh();
  std::vector<snapped_vertex> v;
  v.reserve(mesh.size());
  for (const mesh_vertex& m : mesh)
    v.push_back(snap(params, m, static_cast<float>(extent.width), static_cast<float>(extent.height)));
  for (std::size_t t = 0; t + 2 < v.size(); t += 3) {
    std::array<const snapped_vertex*, 3> tri{&v[t], &v[t + 1], &v[t + 2]};
    std::int64_t area = edge(*tri[0], *tri[1], tri[2]->x, tri[2]->y);
    if (area == 0) continue;
    if (area < 0) {  // both faces drawn: wind the back face the other way
      std::swap(tri[1], tri[2]);
      area = -area;
    }
    const auto& [a, b, c] = tri;
    const auto lo = [&](std::int64_t s) {
      return std::max<std::int64_t>(0, (s - subpixels / 2 + subpixels - 1) / subpixels);
    };
    const std::int64_t x0 = lo(std::min({a->x, b->x, c->x}));
    const std::int64_t y0 = lo(std::min({a->y, b->y, c->y}));
    const std::int64_t x1 =
        std::min<std::int64_t>(extent.width - 1, (std::max({a->x, b->x, c->x}) - subpixels / 2) / subpixels);
    const std::int64_t y1 =
        std::min<std::int64_t>(extent.height - 1, (std::max({a->y, b->y, c->y}) - subpixels / 2) / subpixels);
    // The edges' biases: a sample on an edge that is not top-left is out.
    const std::int64_t bias_a = top_left(*b, *c) ? 0 : -1;
    const std::int64_t bias_b = top_left(*c, *a) ? 0 : -1;
    const std::int64_t bias_c = top_left(*a, *b) ? 0 : -1;
    for (std::int64_t py = y0; py <= y1; ++py) {
      const std::int64_t sy = py * subpixels + subpixels / 2;
      for (std::int64_t px = x0; px <= x1; ++px) {
        const std::int64_t sx = px * subpixels + subpixels / 2;
        const std::int64_t ea = edge(*b, *c, sx, sy);
        const std::int64_t eb = edge(*c, *a, sx, sy);
        const std::int64_t ec = edge(*a, *b, sx, sy);
        if (ea + bias_a < 0 || eb + bias_b < 0 || ec + bias_c < 0) continue;
        const double la = static_cast<double>(ea) / static_cast<double>(area);
        const double lb = static_cast<double>(eb) / static_cast<double>(area);
        const double lc = static_cast<double>(ec) / static_cast<double>(area);
        const auto z = static_cast<float>(la * a->z + lb * b->z + lc * c->z);
        const std::size_t p = static_cast<std::size_t>(py) * extent.width + static_cast<std::size_t>(px);
        if (z < 0.0f || !(z < depth[p])) continue;
        depth[p] = z;
        if (color.empty()) continue;
        // The normal interpolated perspective-correctly.
        const double qa = la / a->w;
        const double qb = lb / b->w;
        const double qc = lc / c->w;
        const double q = qa + qb + qc;
        std::array<float, 3> n{};
        for (std::size_t i = 0; i < 3; ++i)
          n[i] = static_cast<float>((qa * a->normal[i] + qb * b->normal[i] + qc * c->normal[i]) / q);
        const std::array<float, 3> lit = shade_normal(n);
        const float texel[4] = {lit[0], lit[1], lit[2], 1.0f};
        std::memcpy(color.data() + p * sizeof texel, texel, sizeof texel);
      }
    }
  }
  if (!depth_bytes.empty()) std::memcpy(depth_bytes.data(), depth.data(), pixels * sizeof(float));
}

void color_cpu(const ferrum::gpu::kernel_args& args) noexcept {
  draw(load_draw_params(args.secondary), args.primary_extent, args.primary, {});
}

void depth_cpu(const ferrum::gpu::kernel_args& args) noexcept {
  draw(load_draw_params(args.secondary), args.primary_extent, {}, args.primary);
}

ferrum::gpu::kernel_source null_kernel(const char* name, ferrum::gpu::cpu_kernel cpu) noexcept {
  return {.name = name,
          .spirv = {},
          .cpu = cpu,
          .push_words = 0,
          .local_size_x = 8,
          .local_size_y = 8,
          .primary = ferrum::gpu::kernel_operand_kind::storage_image,
          .secondary = ferrum::gpu::kernel_operand_kind::buffer};
}

}  // namespace

void draw_as_a_gpu(const draw_params& params, ferrum::gpu::image_extent extent, std::span<std::byte> color,
                   std::span<std::byte> depth) noexcept {
  draw(params, extent, color, depth);
}

ferrum::gpu::kernel_source null_color_kernel() noexcept {
  return null_kernel("frame_loop.null_draw.color", &color_cpu);
}
ferrum::gpu::kernel_source null_depth_kernel() noexcept {
  return null_kernel("frame_loop.null_draw.depth", &depth_cpu);
}

}  // namespace frame_loop
