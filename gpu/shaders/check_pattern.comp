#version 450
// Adds to secondary's first word the number of primary words i that differ
// from pattern_word(user[0], i).
#define USER_WORDS 1
#include "kernel_abi.glsl"

void main() {
  const uint base = primary_base();
  const uint count = primary_words();
  uint mismatches = 0u;
  for (uint i = gl_GlobalInvocationID.x; i < count; i += grid_stride()) {
    if (primary.words[base + i] != pattern_word(pc.user[0], i)) {
      mismatches += 1u;
    }
  }
  // Most invocations find nothing: only those that did touch the counter.
  // Without a secondary range (size 0) there is no counter to add to.
  if (mismatches != 0u && pc.secondary_size >= 4u) {
    atomicAdd(secondary.words[pc.secondary_offset / 4u], mismatches);
  }
}
