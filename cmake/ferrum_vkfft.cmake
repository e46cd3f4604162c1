# ferrum_vkfft.cmake — VkFFT (Debian's libvkfft-dev, header-only vkFFT.h) for
# the examples and benchmarks that record its FFTs into native nodes:
#
#   include(ferrum_vkfft)
#   add_library(my_fft STATIC fft_plan.cpp)   # the one file that includes <vkFFT.h>
#   target_link_libraries(my_fft PRIVATE ferrum_vkfft)
#
# Defines the interface target ferrum_vkfft: the include directory of a
# patched copy of vkFFT.h (below), VKFFT_BACKEND=0 (Vulkan), and what VkFFT
# links at run time: glslang (its shader compiler, Debian's glslang-dev),
# SPIRV-Tools (through glslang's SPIRV library) and the Vulkan loader.
# vkFFT.h is ~33,000 lines of static functions: include it in exactly one
# translation unit.
#
# Why a patched copy. VkFFT 1.2.26 fills glslang's glslang_resource_t with a
# positional initializer written for an older glslang: Debian 12's glslang
# 12.0 has nine more fields (the EXT mesh and task shader limits,
# max_mesh_output_vertices_ext .. max_mesh_view_count_ext) before
# max_dual_source_draw_buffers_ext, so every later value, and the braces of
# `.limits`, land one field early and the header does not compile (as C++:
# braces around an int; as C it fails elsewhere). The copy, written to the
# build directory at configure time, inserts the nine values (glslang's own
# defaults, from its default resource limits) before
# maxDualSourceDrawBuffersEXT in both initializers. Nothing of VkFFT is
# vendored into the repository. The patch is applied only where glslang has
# the fields and VkFFT lacks them, so a fixed VkFFT or an older glslang get
# the header unchanged; a VkFFT whose initializer no longer looks as expected
# fails the configure step, naming the pattern, rather than building a
# shader compiler fed shifted limits.
include_guard(GLOBAL)

find_package(Vulkan 1.2 REQUIRED)
find_package(Threads REQUIRED)
# glslang's static libraries by name, in link order (each needs the ones
# after it), not find_package(glslang): Debian 12's glslang-config.cmake
# fails unless glslang-tools (glslangValidator) is installed too.
set(ferrum_vkfft_libraries "")
foreach(name IN ITEMS glslang SPIRV MachineIndependent GenericCodeGen OGLCompiler OSDependent
                      SPIRV-Tools-opt SPIRV-Tools)
  string(MAKE_C_IDENTIFIER "FERRUM_VKFFT_LIBRARY_${name}" library_var)
  find_library(${library_var} "${name}")
  if(NOT ${library_var})
    message(FATAL_ERROR "VkFFT needs lib${name} (Debian: glslang-dev, spirv-tools; scripts/install-deps.sh)")
  endif()
  list(APPEND ferrum_vkfft_libraries "${${library_var}}")
endforeach()

find_path(FERRUM_VKFFT_INCLUDE_DIR vkFFT.h DOC "Directory holding VkFFT's vkFFT.h (Debian: libvkfft-dev)")
find_path(FERRUM_GLSLANG_C_INCLUDE_DIR glslang/Include/glslang_c_interface.h
  DOC "Directory holding glslang's C interface (Debian: glslang-dev)")
if(NOT FERRUM_VKFFT_INCLUDE_DIR)
  message(FATAL_ERROR "vkFFT.h not found: install VkFFT (Debian: apt-get install libvkfft-dev, "
                      "scripts/install-deps.sh) or set FERRUM_VKFFT_INCLUDE_DIR")
endif()
if(NOT FERRUM_GLSLANG_C_INCLUDE_DIR)
  message(FATAL_ERROR "glslang/Include/glslang_c_interface.h not found: install glslang-dev")
endif()

set(ferrum_vkfft_source "${FERRUM_VKFFT_INCLUDE_DIR}/vkFFT.h")
set(ferrum_vkfft_glslang_header "${FERRUM_GLSLANG_C_INCLUDE_DIR}/glslang/Include/glslang_c_interface.h")
set(ferrum_vkfft_dir "${PROJECT_BINARY_DIR}/ferrum_vkfft/include")
# Configure again when either header changes (a package upgrade).
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${ferrum_vkfft_source}" "${ferrum_vkfft_glslang_header}")

file(READ "${ferrum_vkfft_source}" ferrum_vkfft_text)
file(READ "${ferrum_vkfft_glslang_header}" ferrum_glslang_text)
string(FIND "${ferrum_glslang_text}" "max_mesh_view_count_ext" ferrum_glslang_has_ext_limits)
string(FIND "${ferrum_vkfft_text}" "maxMeshViewCountEXT" ferrum_vkfft_has_ext_limits)
if(NOT ferrum_glslang_has_ext_limits EQUAL -1 AND ferrum_vkfft_has_ext_limits EQUAL -1)
  set(ferrum_vkfft_anchor "/* .maxDualSourceDrawBuffersEXT = */ 1,")
  string(FIND "${ferrum_vkfft_text}" "${ferrum_vkfft_anchor}" ferrum_vkfft_anchor_at)
  if(ferrum_vkfft_anchor_at EQUAL -1)
    message(FATAL_ERROR "ferrum_vkfft.cmake: '${ferrum_vkfft_anchor}' not found in ${ferrum_vkfft_source}: "
                        "this VkFFT fills glslang_resource_t differently; update the patch in cmake/ferrum_vkfft.cmake")
  endif()
  string(REPLACE "${ferrum_vkfft_anchor}"
    "/* .maxMeshOutputVerticesEXT = */ 256, /* .maxMeshOutputPrimitivesEXT = */ 256, \
/* .maxMeshWorkGroupSizeX_EXT = */ 128, /* .maxMeshWorkGroupSizeY_EXT = */ 128, /* .maxMeshWorkGroupSizeZ_EXT = */ 128, \
/* .maxTaskWorkGroupSizeX_EXT = */ 128, /* .maxTaskWorkGroupSizeY_EXT = */ 128, /* .maxTaskWorkGroupSizeZ_EXT = */ 128, \
/* .maxMeshViewCountEXT = */ 4, /* ferrum_vkfft.cmake: the nine EXT limits glslang 12 adds */
				${ferrum_vkfft_anchor}"
    ferrum_vkfft_text "${ferrum_vkfft_text}")
endif()
# Written only when it changes, so that a configure run rebuilds nothing
# (not file(CONFIGURE): it would expand any @word@ in the header).
set(ferrum_vkfft_old_text "")
if(EXISTS "${ferrum_vkfft_dir}/vkFFT.h")
  file(READ "${ferrum_vkfft_dir}/vkFFT.h" ferrum_vkfft_old_text)
endif()
if(NOT ferrum_vkfft_old_text STREQUAL ferrum_vkfft_text)
  file(WRITE "${ferrum_vkfft_dir}/vkFFT.h" "${ferrum_vkfft_text}")
endif()
unset(ferrum_vkfft_old_text)
unset(ferrum_vkfft_text)
unset(ferrum_glslang_text)

add_library(ferrum_vkfft INTERFACE)
target_include_directories(ferrum_vkfft SYSTEM INTERFACE "${ferrum_vkfft_dir}")
target_compile_definitions(ferrum_vkfft INTERFACE VKFFT_BACKEND=0)
target_link_libraries(ferrum_vkfft INTERFACE ${ferrum_vkfft_libraries} Vulkan::Vulkan Threads::Threads)
