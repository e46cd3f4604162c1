# The Vulkan device's sources (gpu/src/vulkan/), listed for gpu/CMakeLists.txt.
set(ferrum_gpu_vulkan_sources)
