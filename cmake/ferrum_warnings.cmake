# Warnings live on a private interface target that every ferrum target links
# privately, so they never leak into an embedding project's flags.
add_library(ferrum_warnings INTERFACE)
target_compile_options(ferrum_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wconversion -Wshadow
    -Wold-style-cast -Wcast-align -Woverloaded-virtual
    -Wimplicit-fallthrough>)
# g++ 12 at -O3 reports `"literal" + std::string&&` as overlapping memcpy
# (GCC bug 105329, a false positive).
target_compile_options(ferrum_warnings INTERFACE $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
if(FERRUM_WARNINGS_AS_ERRORS)
  target_compile_options(ferrum_warnings INTERFACE $<$<CXX_COMPILER_ID:GNU,Clang>:-Werror>)
endif()

# ferrum_library(<folder> ...sources) declares the library of one folder:
# target ferrum_<folder>, alias ferrum::<folder>, public headers in include/.
function(ferrum_library folder)
  add_library(ferrum_${folder} ${ARGN})
  add_library(ferrum::${folder} ALIAS ferrum_${folder})
  set_target_properties(ferrum_${folder} PROPERTIES EXPORT_NAME ${folder})
  target_compile_features(ferrum_${folder} PUBLIC cxx_std_20)
  target_include_directories(ferrum_${folder} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(ferrum_${folder} PRIVATE $<BUILD_INTERFACE:ferrum_warnings>)
endfunction()
