// examples/frame_loop/frame_mesh.cpp — the torus, its pose per frame, and the
// host's rasterizer of it (frame_mesh.hpp). The shading constants are
// shaders/mesh_fragment.frag's; change both together.
#include "frame_mesh.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

namespace frame_loop {
namespace {

using vec3 = std::array<float, 3>;
using vec4 = std::array<float, 4>;

constexpr std::uint32_t around = 64;  // segments around the y axis
constexpr std::uint32_t tube = 32;    // segments around the tube
constexpr float major_radius = 0.8f;
constexpr float minor_radius = 0.32f;

// The camera: 50 degrees of vertical field, the torus 3 units ahead, depth
// from 1 to 6 units mapped onto [0, 1].
constexpr float view_distance = 3.0f;
constexpr float near_plane = 1.0f;
constexpr float far_plane = 6.0f;

// shaders/mesh_fragment.frag's light (towards it, in view space), albedo, ambient
// and light intensity: the lit side brighter than 1, for the tone map.
constexpr vec3 light{0.4f, 0.7f, 0.6f};
constexpr vec3 albedo{0.95f, 0.3f, 0.08f};
constexpr float ambient = 0.05f;
constexpr float intensity = 1.9f;

// Where view depths of a pixel's samples differ by more than this, an
// occlusion edge crosses it (the torus spans about 1.3 units of depth over
// some hundred pixels, so neighbouring samples on one surface differ by
// far less).
constexpr float depth_jump = 0.05f;

float dot4(const vec4& a, const vec4& b) noexcept { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]; }
float dot3(const vec4& a, const vec3& b) noexcept { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

std::vector<mesh_vertex> make_torus() {
  const auto point = [](std::uint32_t u, std::uint32_t v) {
    const float theta = 2.0f * std::numbers::pi_v<float> * static_cast<float>(u % around) / around;
    const float phi = 2.0f * std::numbers::pi_v<float> * static_cast<float>(v % tube) / tube;
    const float ring = major_radius + minor_radius * std::cos(phi);
    return mesh_vertex{{ring * std::cos(theta), minor_radius * std::sin(phi), ring * std::sin(theta)},
                       {std::cos(phi) * std::cos(theta), std::sin(phi), std::cos(phi) * std::sin(theta)}};
  };
  std::vector<mesh_vertex> mesh;
  mesh.reserve(std::size_t{around} * tube * 6);
  for (std::uint32_t u = 0; u < around; ++u) {
    for (std::uint32_t v = 0; v < tube; ++v) {
      for (const auto& [du, dv] : {std::pair{0u, 0u}, {1u, 0u}, {1u, 1u}, {0u, 0u}, {1u, 1u}, {0u, 1u}})
        mesh.push_back(point(u + du, v + dv));
    }
  }
  return mesh;
}

// A vertex after the vertex shader and the viewport transform.
struct window_vertex {
  float x, y, z;  // pixels, and depth in [0, 1]
  float w;        // the clip w: the view depth
  vec3 normal;    // rotated, as the shader outputs it
};

window_vertex transform(const draw_params& params, const mesh_vertex& v, float width, float height) noexcept {
  const vec4 p{v.position[0], v.position[1], v.position[2], 1.0f};
  const vec4 clip{dot4(params.clip[0], p), dot4(params.clip[1], p), dot4(params.clip[2], p), dot4(params.clip[3], p)};
  return {(clip[0] / clip[3] + 1.0f) * 0.5f * width,
          (clip[1] / clip[3] + 1.0f) * 0.5f * height,
          clip[2] / clip[3],
          clip[3],
          {dot3(params.model[0], v.normal), dot3(params.model[1], v.normal), dot3(params.model[2], v.normal)}};
}

// What a sample of a grid saw: the nearest triangle (or none) and where on it.
struct sample_hit {
  float depth = 1.0f;  // the cleared depth: a triangle at 1 or beyond fails less-than
  std::uint32_t triangle = std::numeric_limits<std::uint32_t>::max();
  std::array<float, 3> weights{};  // screen-space barycentrics
  [[nodiscard]] bool covered() const noexcept { return triangle != std::numeric_limits<std::uint32_t>::max(); }
};

// Every triangle, in order, depth-tested at the samples (column + offset,
// row + offset) of a `columns` x `rows` grid.
std::vector<sample_hit> rasterize(std::span<const window_vertex> vertices, float offset, std::uint32_t columns,
                                  std::uint32_t rows) {
  std::vector<sample_hit> hits(std::size_t{columns} * rows);
  const auto edge = [](const window_vertex& a, const window_vertex& b, float x, float y) {
    return (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
  };
  for (std::uint32_t t = 0; t * 3 + 2 < vertices.size(); ++t) {
    const window_vertex& a = vertices[t * 3];
    const window_vertex& b = vertices[t * 3 + 1];
    const window_vertex& c = vertices[t * 3 + 2];
    const float area = edge(a, b, c.x, c.y);
    if (area == 0.0f) continue;
    const auto first = [&](float lo) { return static_cast<std::int64_t>(std::ceil(lo - offset)); };
    const auto last = [&](float hi) { return static_cast<std::int64_t>(std::floor(hi - offset)); };
    const std::int64_t x0 = std::max<std::int64_t>(0, first(std::min({a.x, b.x, c.x})));
    const std::int64_t x1 = std::min<std::int64_t>(columns - 1, last(std::max({a.x, b.x, c.x})));
    const std::int64_t y0 = std::max<std::int64_t>(0, first(std::min({a.y, b.y, c.y})));
    const std::int64_t y1 = std::min<std::int64_t>(rows - 1, last(std::max({a.y, b.y, c.y})));
    for (std::int64_t row = y0; row <= y1; ++row) {
      for (std::int64_t column = x0; column <= x1; ++column) {
        const float x = static_cast<float>(column) + offset;
        const float y = static_cast<float>(row) + offset;
        const std::array<float, 3> l{edge(b, c, x, y) / area, edge(c, a, x, y) / area, edge(a, b, x, y) / area};
        if (l[0] < 0.0f || l[1] < 0.0f || l[2] < 0.0f) continue;
        const float z = l[0] * a.z + l[1] * b.z + l[2] * c.z;
        sample_hit& hit = hits[static_cast<std::size_t>(row) * columns + static_cast<std::size_t>(column)];
        if (z < 0.0f || !(z < hit.depth)) continue;
        hit = {z, t, l};
      }
    }
  }
  return hits;
}

// The perspective-correct weights of a hit's three vertices.
std::array<float, 3> perspective(const sample_hit& hit, std::span<const window_vertex> vertices) noexcept {
  std::array<float, 3> p{};
  float sum = 0.0f;
  for (std::size_t i = 0; i < 3; ++i) {
    p[i] = hit.weights[i] / vertices[hit.triangle * 3 + i].w;
    sum += p[i];
  }
  for (float& weight : p) weight /= sum;
  return p;
}

// shaders/mesh_fragment.frag: the interpolated normal, normalized, lit.
vec3 shade(const sample_hit& hit, std::span<const window_vertex> vertices) noexcept {
  const std::array<float, 3> p = perspective(hit, vertices);
  vec3 n{};
  for (std::size_t axis = 0; axis < 3; ++axis)
    for (std::size_t i = 0; i < 3; ++i) n[axis] += p[i] * vertices[hit.triangle * 3 + i].normal[axis];
  return shade_normal(n);
}

// The view depth of a hit (1 / w interpolates linearly on screen).
float view_depth(const sample_hit& hit, std::span<const window_vertex> vertices) noexcept {
  float inverse = 0.0f;
  for (std::size_t i = 0; i < 3; ++i) inverse += hit.weights[i] / vertices[hit.triangle * 3 + i].w;
  return 1.0f / inverse;
}

}  // namespace

std::array<float, 3> shade_normal(const std::array<float, 3>& n) noexcept {
  const float length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  const float diffuse = std::max(0.0f, (n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / length);
  const float lit = ambient + intensity * diffuse;
  return {albedo[0] * lit, albedo[1] * lit, albedo[2] * lit};
}

std::span<const mesh_vertex> torus_mesh() {
  static const std::vector<mesh_vertex> mesh = make_torus();
  return mesh;
}

draw_params draw_params_of_frame(std::uint64_t frame, std::uint32_t width, std::uint32_t height) noexcept {
  const float t = static_cast<float>(frame) / 60.0f;
  // Model: turning about y, tilted about x (rows of Rx(b) Ry(a)).
  const float a = 0.7f * t;
  const float b = 0.5f + 0.45f * t;
  const float ca = std::cos(a);
  const float sa = std::sin(a);
  const float cb = std::cos(b);
  const float sb = std::sin(b);
  const std::array<vec3, 3> r{{{ca, 0.0f, sa}, {sb * sa, cb, -sb * ca}, {-cb * sa, sb, cb * ca}}};
  // Projection: Vulkan's clip space (y down, depth in [0, 1]) from a view
  // looking down -z, the torus at z = -view_distance.
  const float f = 1.0f / std::tan(25.0f * std::numbers::pi_v<float> / 180.0f);
  const float aspect = static_cast<float>(width) / static_cast<float>(height);
  const float depth_scale = far_plane / (near_plane - far_plane);
  const float depth_offset = near_plane * far_plane / (near_plane - far_plane);
  draw_params p{};
  for (std::size_t c = 0; c < 3; ++c) {
    p.clip[0][c] = f / aspect * r[0][c];
    p.clip[1][c] = -f * r[1][c];
    p.clip[2][c] = depth_scale * r[2][c];
    p.clip[3][c] = -r[2][c];
    for (std::size_t row = 0; row < 3; ++row) p.model[row][c] = r[row][c];
  }
  p.clip[2][3] = depth_scale * -view_distance + depth_offset;
  p.clip[3][3] = view_distance;
  return p;
}

void store(const draw_params& params, std::span<std::byte> slot) noexcept {
  std::memcpy(slot.data(), params.clip.data(), sizeof params.clip);
  std::memcpy(slot.data() + sizeof params.clip, params.model.data(), sizeof params.model);
}

draw_params load_draw_params(std::span<const std::byte> slot) noexcept {
  draw_params params{};
  std::memcpy(params.clip.data(), slot.data(), sizeof params.clip);
  std::memcpy(params.model.data(), slot.data() + sizeof params.clip, sizeof params.model);
  return params;
}

void draw_mesh_on_host(const draw_params& params, ferrum::gpu::image_extent extent, std::span<std::byte> hdr,
                       std::span<float> depth, std::vector<std::uint8_t>* edges) {
  const std::span<const mesh_vertex> mesh = torus_mesh();
  std::vector<window_vertex> vertices;
  vertices.reserve(mesh.size());
  const auto width = static_cast<float>(extent.width);
  const auto height = static_cast<float>(extent.height);
  for (const mesh_vertex& v : mesh) vertices.push_back(transform(params, v, width, height));

  const std::vector<sample_hit> centres = rasterize(vertices, 0.5f, extent.width, extent.height);
  for (std::size_t p = 0; p < centres.size(); ++p) {
    if (!centres[p].covered()) continue;
    const vec3 color = shade(centres[p], vertices);
    const float texel[4] = {color[0], color[1], color[2], 1.0f};
    std::memcpy(hdr.data() + p * sizeof texel, texel, sizeof texel);
    if (!depth.empty()) depth[p] = centres[p].depth;
  }
  if (edges == nullptr) return;
  // A pixel's corners: a grid one sample wider and taller.
  const std::uint32_t columns = extent.width + 1;
  const std::vector<sample_hit> corners = rasterize(vertices, 0.0f, columns, extent.height + 1);
  edges->assign(centres.size(), 0);
  for (std::uint32_t y = 0; y < extent.height; ++y) {
    for (std::uint32_t x = 0; x < extent.width; ++x) {
      const std::size_t p = std::size_t{y} * extent.width + x;
      const std::array<const sample_hit*, 5> samples{
          &centres[p], &corners[std::size_t{y} * columns + x], &corners[std::size_t{y} * columns + x + 1],
          &corners[std::size_t{y + 1} * columns + x], &corners[std::size_t{y + 1} * columns + x + 1]};
      const auto covered = std::ranges::count_if(samples, [](const sample_hit* s) { return s->covered(); });
      if (covered == 0) continue;
      if (covered != 5) {
        (*edges)[p] = 1;
        continue;
      }
      float nearest = std::numeric_limits<float>::max();
      float farthest = 0.0f;
      for (const sample_hit* s : samples) {
        const float w = view_depth(*s, vertices);
        nearest = std::min(nearest, w);
        farthest = std::max(farthest, w);
      }
      if (farthest - nearest > depth_jump) (*edges)[p] = 1;
    }
  }
}

}  // namespace frame_loop
