#version 450
// image_affine: primary texel = secondary texel * a + b (every channel),
// a = uintBitsToFloat(user[0]), b = uintBitsToFloat(user[1]). Primary: a
// storage image, secondary: a sampled image, both rgba32-float, texel (x, y)
// from texel (x, y) of the secondary, at least as wide and tall.
#define USER_WORDS 2
#define PRIMARY_FORMAT rgba32f
#define SECONDARY_SAMPLED
#include "image_kernel_abi.glsl"

void main() {
  ivec2 at;
  if (!primary_texel(at)) return;
  const float a = uintBitsToFloat(pc.user[0]);
  const float b = uintBitsToFloat(pc.user[1]);
  imageStore(primary, at, texelFetch(secondary, at, 0) * a + b);
}
