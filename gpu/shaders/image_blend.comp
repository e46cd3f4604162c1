#version 450
// image_blend: primary texel = primary texel * a + secondary texel * b
// (every channel), a = uintBitsToFloat(user[0]), b = uintBitsToFloat(user[1]).
// Primary: a storage image it reads and writes, secondary: a sampled image,
// both rgba32-float; texel (x, y) takes the secondary's nearest texel
// (x * secondary width / primary width, y * secondary height / primary
// height), so a smaller secondary is scaled up (a bloom chain's way back up)
// and one of the same size read texel for texel.
#define USER_WORDS 2
#define PRIMARY_FORMAT rgba32f
#define PRIMARY_READ
#define SECONDARY_SAMPLED
#include "image_kernel_abi.glsl"

void main() {
  ivec2 at;
  if (!primary_texel(at)) return;
  const float a = uintBitsToFloat(pc.user[0]);
  const float b = uintBitsToFloat(pc.user[1]);
  const uvec2 from = uvec2(at) * uvec2(pc.secondary_a, pc.secondary_b) / uvec2(pc.primary_width, pc.primary_height);
  imageStore(primary, at, imageLoad(primary, at) * a + texelFetch(secondary, ivec2(from), 0) * b);
}
