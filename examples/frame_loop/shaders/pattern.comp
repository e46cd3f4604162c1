#version 450
// frame_loop's first pass: the frame's HDR image, an animated plasma over a
// checkerboard lit by a moving glow brighter than 1. Primary: the image, RGBA
// f32 per pixel, row-major; secondary: node/pattern's binding slot, the
// frame's parameters (frame_kernels.hpp, pattern_params): time, glow x, glow
// y, glow power. user[0], user[1]: width, height. The C++ form in
// frame_kernels.cpp computes the same, in the same order.
#define USER_WORDS 2
#include "kernel_abi.glsl"

float parameter(uint index) { return uintBitsToFloat(secondary.words[pc.secondary_offset / 4u + index]); }

void main() {
  const uint width = pc.user[0];
  const uint height = pc.user[1];
  const uint base = primary_base();
  const uint pixels = primary_words() / 4u;
  const float t = parameter(0u);
  const vec2 glow_at = vec2(parameter(1u), parameter(2u));
  const float glow_power = parameter(3u);
  // One pixel (four words) per step: a quarter of the invocations the
  // device launches (one per word) find nothing to do.
  for (uint p = gl_GlobalInvocationID.x; p < pixels; p += grid_stride()) {
    const uint x = p % width;
    const uint y = p / width;
    const float u = (float(x) + 0.5) / float(width);
    const float v = (float(y) + 0.5) / float(height);
    const float checker = (((x / 32u) ^ (y / 32u)) & 1u) == 0u ? 1.0 : 0.6;
    const float r = (0.5 + 0.5 * sin(9.0 * u + t)) * 0.5 * checker;
    const float g = (0.5 + 0.5 * sin(7.0 * v - 1.3 * t)) * 0.5 * checker;
    const float b = (0.5 + 0.5 * sin(6.0 * (u + v) + 0.7 * t)) * 0.5 * checker;
    const float du = u - glow_at.x;
    const float dv = v - glow_at.y;
    const float glow = glow_power * exp(-(du * du + dv * dv) * 300.0);
    primary.words[base + 4u * p + 0u] = floatBitsToUint(r + glow);
    primary.words[base + 4u * p + 1u] = floatBitsToUint(g + glow * 0.75);
    primary.words[base + 4u * p + 2u] = floatBitsToUint(b + glow * 0.45);
    primary.words[base + 4u * p + 3u] = floatBitsToUint(1.0);
  }
}
