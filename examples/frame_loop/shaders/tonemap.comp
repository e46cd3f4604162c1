#version 450
// frame_loop's tone map: HDR to displayable 8-bit colour. Reinhard's
// c / (1 + c) after an exposure of uintBitsToFloat(user[0]), then gamma 2
// (a square root), to whole bytes. Primary: the 8-bit image (rgba8-unorm, a
// storage image; alpha 255; its channels in RGBA order, or BGRA when
// user[1] is 1: the byte order of a swapchain that has no RGBA images);
// secondary: the HDR image (rgba32-float, sampled). Each byte is stored as
// byte / 255, which the image's unorm conversion turns back into the byte.
// The C++ form in frame_kernels.cpp computes the same.
#define USER_WORDS 2
#define PRIMARY_FORMAT rgba8
#define SECONDARY_SAMPLED
#include "image_kernel_abi.glsl"

float to_byte(float hdr, float exposure) {
  const float c = hdr * exposure;
  return float(uint(sqrt(c / (1.0 + c)) * 255.0 + 0.5));
}

void main() {
  ivec2 at;
  if (!primary_texel(at)) return;
  const float exposure = uintBitsToFloat(pc.user[0]);
  const bool bgra = pc.user[1] != 0u;
  const vec4 hdr = texelFetch(secondary, at, 0);
  const vec3 rgb = vec3(to_byte(hdr.r, exposure), to_byte(hdr.g, exposure), to_byte(hdr.b, exposure));
  imageStore(primary, at, vec4(bgra ? rgb.bgr : rgb, 255.0) / 255.0);
}
