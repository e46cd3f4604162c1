// The contract every ferrum kernel follows (ferrum/gpu/kernel.hpp): the
// primary range's arena in set 0, the secondary's in set 1 (the primary's
// again when the dispatch has none), ranges in bytes as the first four push
// constants, then the kernel's own USER_WORDS words. A kernel loops
// grid-stride over the primary range's 32-bit words.
#ifndef USER_WORDS
#error "define USER_WORDS before including kernel_abi.glsl"
#endif

layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer primary_arena { uint words[]; } primary;
layout(set = 1, binding = 0, std430) buffer secondary_arena { uint words[]; } secondary;

layout(push_constant, std430) uniform push_block {
  uint primary_offset;
  uint primary_size;
  uint secondary_offset;
  uint secondary_size;
  uint user[USER_WORDS];
} pc;

uint primary_base() { return pc.primary_offset / 4u; }
uint primary_words() { return pc.primary_size / 4u; }
uint grid_stride() { return gl_NumWorkGroups.x * gl_WorkGroupSize.x; }

// ferrum::gpu::builtin::pattern_word, bit for bit (lowbias32).
uint pattern_word(uint seed, uint word_index) {
  uint x = seed ^ (word_index * 0x9e3779b1u);
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
