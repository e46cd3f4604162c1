#version 450
// frame_loop's raster pass: the torus lit by one light, ambient plus
// Lambert's diffuse, brighter than 1 on its lit side (for the tone map). The
// constants are frame_mesh.cpp's (shade); change both together.
layout(location = 0) in vec3 view_normal;
layout(location = 0) out vec4 color;

const vec3 light = vec3(0.4, 0.7, 0.6);
const vec3 albedo = vec3(0.95, 0.3, 0.08);
const float ambient = 0.05;
const float intensity = 1.9;

void main() {
  const float diffuse = max(0.0, dot(view_normal, light) / length(view_normal));
  color = vec4(albedo * (ambient + intensity * diffuse), 1.0);
}
