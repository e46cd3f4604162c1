#version 450
// The raster test's triangles (vulkan_raster_test.cpp): positions from the
// lane's vertex buffer (x, y, depth, 1 each), their colour a push constant.
layout(location = 0) in vec4 position;

void main() { gl_Position = position; }
