#version 450
// frame_loop's last pass: HDR to displayable 8-bit colour. Reinhard's
// c / (1 + c) after an exposure of uintBitsToFloat(user[0]), then gamma 2
// (a square root). Primary: the 8-bit image (one word per pixel, alpha 255
// in the high byte; red in the low byte, or blue when user[1] is 1: the
// BGRA order of a swapchain that has no RGBA images); secondary: the HDR
// image (RGBA f32 per pixel). The C++ form in frame_kernels.cpp computes the
// same.
#define USER_WORDS 2
#include "kernel_abi.glsl"

uint to_byte(float hdr, float exposure) {
  const float c = hdr * exposure;
  return uint(sqrt(c / (1.0 + c)) * 255.0 + 0.5);
}

void main() {
  const float exposure = uintBitsToFloat(pc.user[0]);
  const bool bgra = pc.user[1] != 0u;
  const uint base = primary_base();
  const uint source = pc.secondary_offset / 4u;
  const uint count = primary_words();
  for (uint p = gl_GlobalInvocationID.x; p < count; p += grid_stride()) {
    const uint r = to_byte(uintBitsToFloat(secondary.words[source + 4u * p + 0u]), exposure);
    const uint g = to_byte(uintBitsToFloat(secondary.words[source + 4u * p + 1u]), exposure);
    const uint b = to_byte(uintBitsToFloat(secondary.words[source + 4u * p + 2u]), exposure);
    primary.words[base + p] = (bgra ? b | (r << 16u) : r | (b << 16u)) | (g << 8u) | (255u << 24u);
  }
}
