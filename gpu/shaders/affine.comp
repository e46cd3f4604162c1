#version 450
// primary word = word * user[0] + user[1], wrapping.
#define USER_WORDS 2
#include "kernel_abi.glsl"

void main() {
  const uint base = primary_base();
  const uint count = primary_words();
  for (uint i = gl_GlobalInvocationID.x; i < count; i += grid_stride()) {
    primary.words[base + i] = primary.words[base + i] * pc.user[0] + pc.user[1];
  }
}
