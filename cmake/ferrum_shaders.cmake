# ferrum_shaders.cmake — compiles GLSL shaders to SPIR-V at build time,
# as comma-separated words that a C++ file includes into an array:
#
#   ferrum_add_shader_words(words "${CMAKE_CURRENT_BINARY_DIR}/shaders"
#                           "${PROJECT_SOURCE_DIR}/gpu/shaders" shaders/blur.comp)
#   add_executable(app main.cpp ${words})    # the rules run before main.cpp builds
#   target_include_directories(app PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/shaders")
#
#   // main.cpp
#   constexpr std::uint32_t blur_spirv[] = {
#   #include "blur.spv.inc"
#   };
#
# Needs Vulkan::glslc: find_package(Vulkan REQUIRED COMPONENTS glslc).

# ferrum_add_shader_words(<out_var> <binary_dir> <include_dir> <shader>...)
# adds one rule per `<name>.<stage>` (.comp, .vert, .frag: glslc takes the
# stage from it; relative to the current source directory, or absolute;
# names unique without their extension) writing `<binary_dir>/<name>.spv.inc` (glslc -mfmt=num, Vulkan 1.2,
# -O), with `#include`s searched in <include_dir>, and appends the outputs to
# <out_var> in the caller's scope. glslc's depfile records the included files,
# so editing one rebuilds exactly the shaders that include it.
function(ferrum_add_shader_words out_var binary_dir include_dir)
  set(outputs ${${out_var}})
  foreach(shader IN LISTS ARGN)
    cmake_path(ABSOLUTE_PATH shader BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" OUTPUT_VARIABLE source)
    cmake_path(GET source STEM name)
    set(words "${binary_dir}/${name}.spv.inc")
    add_custom_command(
      OUTPUT "${words}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${binary_dir}"
      COMMAND Vulkan::glslc --target-env=vulkan1.2 -O -mfmt=num
              -I "${include_dir}" -MD -MF "${words}.d"
              -o "${words}" "${source}"
      DEPENDS "${source}"
      DEPFILE "${words}.d"
      COMMENT "glslc ${shader}"
      VERBATIM)
    list(APPEND outputs "${words}")
  endforeach()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()
