# Install rules and the CMake package (included from the root CMakeLists.txt
# when FERRUM_INSTALL is on): `cmake --install` puts the ferrum libraries, their
# public headers and a package that find_package(ferrum CONFIG) finds, giving
# the targets ferrum::common, ferrum::binding, ferrum::gpu and
# ferrum::scheduler. The `ferrum` command installs itself (tools/). The
# consumer in tests/install/ checks the result.
include(CMakePackageConfigHelpers)

set(ferrum_install_cmakedir "${CMAKE_INSTALL_LIBDIR}/cmake/ferrum")

# Each library's include/ tree is its public API (docs/design.md, "Folders"). The
# SPIR-V words that gpu generates are a private include of its sources, so
# nothing from the build tree is installed here.
set(ferrum_installed_libraries ferrum_common ferrum_binding ferrum_gpu ferrum_scheduler)
foreach(library IN LISTS ferrum_installed_libraries)
  get_target_property(library_dir ${library} SOURCE_DIR)
  install(DIRECTORY "${library_dir}/include/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
endforeach()

# Archive, library and runtime destinations default to GNUInstallDirs'; the
# include path comes from each target's $<INSTALL_INTERFACE> (ferrum_library).
install(TARGETS ${ferrum_installed_libraries} EXPORT ferrumTargets)
install(EXPORT ferrumTargets
  NAMESPACE ferrum::
  DESTINATION "${ferrum_install_cmakedir}")

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/ferrumConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/ferrumConfig.cmake"
  INSTALL_DESTINATION "${ferrum_install_cmakedir}")
# SameMinorVersion: ferrum is 0.x, where (as in semantic versioning) any minor
# release may break the API, so find_package(ferrum 0.1) must accept 0.1.x
# only. SameMajorVersion would let 0.2 satisfy a request for 0.1. Revisit at 1.0.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/ferrumConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/ferrumConfig.cmake"
  "${PROJECT_BINARY_DIR}/ferrumConfigVersion.cmake"
  DESTINATION "${ferrum_install_cmakedir}")
