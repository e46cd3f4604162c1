// The contract of a ferrum kernel whose primary is a storage image
// (ferrum/gpu/kernel.hpp): the image in set 0, written at one texel per
// invocation over a 2D grid of 8 x 8 workgroups (kernel_source
// local_size_x = local_size_y = 8); the secondary in set 1, a sampled image
// read with texelFetch when SECONDARY_SAMPLED is defined, else an arena
// (`secondary.words`). Push constants: the primary's width and height, the
// secondary's width and height (an image) or offset and size in bytes (a
// range), then the kernel's own USER_WORDS words (may be 0).
//
// Define PRIMARY_FORMAT (the image's format qualifier: rgba32f, rgba8, ...)
// before including it, and PRIMARY_READ where the kernel reads its primary
// too (imageLoad: the format is then required, as lavapipe has no
// shaderStorageImageReadWithoutFormat).
#ifndef PRIMARY_FORMAT
#error "define PRIMARY_FORMAT before including image_kernel_abi.glsl"
#endif
#extension GL_EXT_samplerless_texture_functions : require

layout(local_size_x = 8, local_size_y = 8) in;

#ifdef PRIMARY_READ
layout(set = 0, binding = 0, PRIMARY_FORMAT) uniform image2D primary;
#else
layout(set = 0, binding = 0, PRIMARY_FORMAT) uniform writeonly image2D primary;
#endif
#ifdef SECONDARY_SAMPLED
layout(set = 1, binding = 0) uniform texture2D secondary;
#else
layout(set = 1, binding = 0, std430) readonly buffer secondary_arena { uint words[]; } secondary;
#endif

layout(push_constant, std430) uniform push_block {
  uint primary_width;
  uint primary_height;
  uint secondary_a;  // width, or offset in bytes
  uint secondary_b;  // height, or size in bytes
#if USER_WORDS > 0
  uint user[USER_WORDS];
#endif
} pc;

// The texel this invocation writes; false past the image's edge (the grid
// covers it in whole workgroups).
bool primary_texel(out ivec2 at) {
  at = ivec2(gl_GlobalInvocationID.xy);
  return gl_GlobalInvocationID.x < pc.primary_width && gl_GlobalInvocationID.y < pc.primary_height;
}
