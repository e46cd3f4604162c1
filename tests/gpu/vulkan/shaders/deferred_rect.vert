#version 450
// The deferred frame test's draws (vulkan_deferred_frame_test.cpp): a
// rectangle over the left half of the attachments (x in [-1, 0] in clip
// space: the pixels whose centres lie left of the middle), two triangles
// from gl_VertexIndex, no vertex buffer; its depth a push constant.
layout(push_constant, std430) uniform draw {
  vec4 depth;  // x
  vec4 albedo;
  vec4 normal;
} pc;

const vec2 corners[6] = vec2[](vec2(-1.0, -1.0), vec2(0.0, -1.0), vec2(-1.0, 1.0),
                               vec2(0.0, -1.0), vec2(0.0, 1.0), vec2(-1.0, 1.0));

void main() { gl_Position = vec4(corners[gl_VertexIndex], pc.depth.x, 1.0); }
