#version 450
// frame_loop's raster pass (node/draw): the torus's vertices (binding 0, the
// engine's own buffer: frame_mesh.hpp) posed by the frame's draw_params,
// which binding 1 reads per instance from node/draw's binding slot — the
// wave's own bytes, at an address stable per lane, so a replayed list draws
// each frame's pose. The host's form: frame_mesh.cpp, transform.
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec4 clip_x;
layout(location = 3) in vec4 clip_y;
layout(location = 4) in vec4 clip_z;
layout(location = 5) in vec4 clip_w;
layout(location = 6) in vec4 model_x;
layout(location = 7) in vec4 model_y;
layout(location = 8) in vec4 model_z;

layout(location = 0) out vec3 view_normal;

void main() {
  const vec4 p = vec4(position, 1.0);
  gl_Position = vec4(dot(clip_x, p), dot(clip_y, p), dot(clip_z, p), dot(clip_w, p));
  view_normal = vec3(dot(model_x.xyz, normal), dot(model_y.xyz, normal), dot(model_z.xyz, normal));
}
