# The Vulkan device's sources (gpu/src/vulkan/), listed for gpu/CMakeLists.txt.
set(ferrum_gpu_vulkan_sources
  src/vulkan/fence_waiter.cpp
  src/vulkan/vk_result.cpp
  src/vulkan/vulkan_arena.cpp
  src/vulkan/vulkan_command_list.cpp
  src/vulkan/vulkan_descriptor_pool.cpp
  src/vulkan/vulkan_device.cpp
  src/vulkan/vulkan_device_fill.cpp
  src/vulkan/vulkan_instance.cpp
  src/vulkan/vulkan_kernel.cpp
  src/vulkan/vulkan_physical_device.cpp
  src/vulkan/vulkan_queue.cpp
  src/vulkan/vulkan_semaphore.cpp
  src/vulkan/vulkan_swapchain.cpp
  src/vulkan/vulkan_swapchain_acquire.cpp
  src/vulkan/vulkan_timestamp_clock.cpp
  src/vulkan/vulkan_timestamp_pool.cpp)
