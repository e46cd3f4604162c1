#version 450
// The sync validation test's indirect dispatch (vulkan_sync_validation_test.cpp):
// it does nothing; its dispatch reads its arguments from a buffer.
layout(local_size_x = 1) in;

void main() {}
