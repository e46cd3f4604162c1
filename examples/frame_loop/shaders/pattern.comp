#version 450
// frame_loop's first pass: the frame's HDR image, an animated plasma over a
// checkerboard lit by a moving glow brighter than 1. Primary: the image
// (rgba32-float, a storage image); secondary: node/pattern's binding slot,
// the frame's parameters (frame_kernels.hpp, pattern_params): time, glow x,
// glow y, glow power. The C++ form in frame_kernels.cpp computes the same,
// in the same order.
#define USER_WORDS 0
#define PRIMARY_FORMAT rgba32f
#include "image_kernel_abi.glsl"

float parameter(uint index) { return uintBitsToFloat(secondary.words[pc.secondary_a / 4u + index]); }

void main() {
  ivec2 at;
  if (!primary_texel(at)) return;
  const uint x = uint(at.x);
  const uint y = uint(at.y);
  const float t = parameter(0u);
  const vec2 glow_at = vec2(parameter(1u), parameter(2u));
  const float glow_power = parameter(3u);
  const float u = (float(x) + 0.5) / float(pc.primary_width);
  const float v = (float(y) + 0.5) / float(pc.primary_height);
  const float checker = (((x / 32u) ^ (y / 32u)) & 1u) == 0u ? 1.0 : 0.6;
  const float r = (0.5 + 0.5 * sin(9.0 * u + t)) * 0.5 * checker;
  const float g = (0.5 + 0.5 * sin(7.0 * v - 1.3 * t)) * 0.5 * checker;
  const float b = (0.5 + 0.5 * sin(6.0 * (u + v) + 0.7 * t)) * 0.5 * checker;
  const float du = u - glow_at.x;
  const float dv = v - glow_at.y;
  const float glow = glow_power * exp(-(du * du + dv * dv) * 300.0);
  imageStore(primary, at, vec4(r + glow, g + glow * 0.75, b + glow * 0.45, 1.0));
}
