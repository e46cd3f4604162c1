# ferrum_validated_vulkan_environment: the same, with the validation layers
# (synchronization validation included, FERRUM_VALIDATION_ENABLES below)
# enabled through the loader's environment, for the examples that do not
# enable them themselves.
#
# FERRUM_VULKAN_TEST_ENVIRONMENT: the environment (a ctest ENVIRONMENT list)
# of every test process that runs Vulkan — the Vulkan tests, the Vulkan
# `ferrum run` tests (their children inherit it) and the Vulkan examples.
# Empty unless the build uses AddressSanitizer; there it preloads, after the
# ASan runtime (which must come first), tests/sanitizers/keep_libraries.cpp,
# so that the libraries the Vulkan loader opens stay mapped until the leak
# check at exit, where tests/sanitizers/lsan.supp (named by the asan test
# preset's LSAN_OPTIONS) suppresses their own leaks by library. Leak checking
# stays on for everything else. One variable: Catch2's test discovery passes
# a property's value on only when it holds no list.
set(FERRUM_VULKAN_TEST_ENVIRONMENT "")
if(FERRUM_BUILD_TESTS AND CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
  execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -print-file-name=libasan.so
    OUTPUT_VARIABLE ferrum_asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS "${ferrum_asan_runtime}")
    message(FATAL_ERROR "the ASan runtime of ${CMAKE_CXX_COMPILER} was not found ('${ferrum_asan_runtime}')")
  endif()
  add_library(ferrum_keep_libraries SHARED "${PROJECT_SOURCE_DIR}/tests/sanitizers/keep_libraries.cpp")
  set_target_properties(ferrum_keep_libraries PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/tests/sanitizers")
  set(FERRUM_VULKAN_TEST_ENVIRONMENT
    "LD_PRELOAD=${ferrum_asan_runtime}:${PROJECT_BINARY_DIR}/tests/sanitizers/libferrum_keep_libraries.so")
endif()

# FERRUM_VALIDATION_ENABLES: what the validation layers check besides their
# defaults, in every test (the layers read it from VK_LAYER_ENABLES):
# synchronization validation within each command buffer and, at submission,
# between command buffers and submissions — so between a wave's nodes,
# each recorded in its own list. Debian 12's layers (1.3.239) turn the
# second on through this variable (or a settings file) only, not through
# VkValidationFeaturesEXT. The layers split the variable at ':' (a ','
# turned both off). ferrum's Vulkan device reads it too
# (gpu/src/vulkan/host_wait_fences.hpp), and tests/gpu/vulkan's session
# fails where it is missing. FERRUM_VALIDATION_ENABLES_MODIFICATION: the
# same as a ctest ENVIRONMENT_MODIFICATION entry (one value, which Catch2's
# test discovery passes on, beside FERRUM_VULKAN_TEST_ENVIRONMENT).
set(FERRUM_VALIDATION_ENABLES
  "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT:VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT")
set(FERRUM_VALIDATION_ENABLES_MODIFICATION "VK_LAYER_ENABLES=set:${FERRUM_VALIDATION_ENABLES}")
set(ferrum_validated_vulkan_environment ${FERRUM_VULKAN_TEST_ENVIRONMENT}
  "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation"
  "VK_LAYER_ENABLES=${FERRUM_VALIDATION_ENABLES}")
# ferrum_presenting_vulkan_environment: the same with synchronization
# validation within each command buffer only, for the examples whose waves
# the engine's own submissions wait for on a timeline semaphore (embed) or
# whose frames a swapchain presents (frame_loop --present): there the
# layers' checks at submission (1.3.239) model neither timeline semaphore
# waits between submissions nor the presentation engine's order between a
# swapchain image's presents, and report hazards in every run (embed: a
# read of what a wave wrote, in the engine's submission that waits for the
# wave's value; frame_loop: a present after the image's previous present).
set(ferrum_presenting_vulkan_environment ${FERRUM_VULKAN_TEST_ENVIRONMENT}
  "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation"
  "VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")
