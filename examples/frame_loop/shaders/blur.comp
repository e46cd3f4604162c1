#version 450
// frame_loop's blur passes: one half of a separable box blur of radius
// user[2], clamped at the edges, along rows (user[3] = 0, node/blur.x) or
// columns (user[3] = 1, node/blur.y). Primary: the blurred HDR image;
// secondary: the source HDR image (both RGBA f32 per pixel, row-major).
// user[0], user[1]: width, height. The C++ form in frame_kernels.cpp sums in
// the same order.
#define USER_WORDS 4
#include "kernel_abi.glsl"

void main() {
  const int width = int(pc.user[0]);
  const int height = int(pc.user[1]);
  const int radius = int(pc.user[2]);
  const bool along_columns = pc.user[3] != 0u;
  const uint base = primary_base();
  const uint source = pc.secondary_offset / 4u;
  const uint count = primary_words();
  const float taps = float(2 * radius + 1);
  // One word (a channel of a pixel) per step.
  for (uint i = gl_GlobalInvocationID.x; i < count; i += grid_stride()) {
    const uint channel = i % 4u;
    const int x = int((i / 4u) % uint(width));
    const int y = int((i / 4u) / uint(width));
    float sum = 0.0;
    for (int d = -radius; d <= radius; ++d) {
      const int row = along_columns ? clamp(y + d, 0, height - 1) : y;
      const int column = along_columns ? x : clamp(x + d, 0, width - 1);
      sum += uintBitsToFloat(secondary.words[source + uint(row * width + column) * 4u + channel]);
    }
    primary.words[base + i] = floatBitsToUint(sum / taps);
  }
}
