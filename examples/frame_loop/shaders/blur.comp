#version 450
// frame_loop's blur passes: one half of a separable box blur of radius
// user[0], clamped at the edges, along rows (user[1] = 0, node/blur.x) or
// columns (user[1] = 1, node/blur.y). Primary: the blurred HDR image (a
// storage image); secondary: the source HDR image (sampled); both
// rgba32-float, of one size. The C++ form in frame_kernels.cpp sums in the
// same order.
#define USER_WORDS 2
#define PRIMARY_FORMAT rgba32f
#define SECONDARY_SAMPLED
#include "image_kernel_abi.glsl"

void main() {
  ivec2 at;
  if (!primary_texel(at)) return;
  const int width = int(pc.primary_width);
  const int height = int(pc.primary_height);
  const int radius = int(pc.user[0]);
  const bool along_columns = pc.user[1] != 0u;
  vec4 sum = vec4(0.0);
  for (int d = -radius; d <= radius; ++d) {
    const int row = along_columns ? clamp(at.y + d, 0, height - 1) : at.y;
    const int column = along_columns ? at.x : clamp(at.x + d, 0, width - 1);
    sum += texelFetch(secondary, ivec2(column, row), 0);
  }
  imageStore(primary, at, sum / float(2 * radius + 1));
}
