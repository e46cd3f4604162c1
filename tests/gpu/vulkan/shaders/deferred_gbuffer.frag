#version 450
// The deferred frame test's G-buffer draw: albedo and normals, each one
// value pushed per draw (the block deferred_rect.vert declares).
layout(push_constant, std430) uniform draw {
  vec4 depth;
  vec4 albedo;
  vec4 normal;
} pc;

layout(location = 0) out vec4 albedo;
layout(location = 1) out vec4 normal;

void main() {
  albedo = pc.albedo;
  normal = pc.normal;
}
