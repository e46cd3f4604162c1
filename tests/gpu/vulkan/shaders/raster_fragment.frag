#version 450
// The raster test's triangles: each one colour, pushed per draw.
layout(push_constant, std430) uniform triangle { vec4 color; } pc;

layout(location = 0) out vec4 color;

void main() { color = pc.color; }
