#version 450
// primary word i = pattern_word(user[0], i)
#define USER_WORDS 1
#include "kernel_abi.glsl"

void main() {
  const uint base = primary_base();
  const uint count = primary_words();
  for (uint i = gl_GlobalInvocationID.x; i < count; i += grid_stride()) {
    primary.words[base + i] = pattern_word(pc.user[0], i);
  }
}
