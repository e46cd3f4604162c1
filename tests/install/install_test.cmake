# Registers the install test (label `install`), included from
# tests/CMakeLists.txt: run_consumer.cmake installs this build tree into a
# scratch prefix, then builds and runs the consumer project against it with
# this build's generator, compiler and flags. It needs the libraries and the
# `ferrum` command built, as every ctest run does. The add_subdirectory mode
# rebuilds the libraries inside the consumer: it is registered where
# FERRUM_TEST_SUBDIRECTORY_CONSUMER is on (the release preset), and builds them
# unoptimized and without debug information (no build type), since what it
# checks is the CMake project, not the code. Both modes get this build's
# unity batch size and linker flags (the release preset's 16 files a batch
# and lld): at CMake's default of 8 the add_subdirectory build took 121 s of
# CPU, at 16 it takes 90 s (docs/building.md).
set(ferrum_toolchain_args
  "-DGENERATOR=${CMAKE_GENERATOR}"
  "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
  "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
  "-DUNITY_BUILD=${CMAKE_UNITY_BUILD}"
  "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}")
if(CMAKE_UNITY_BUILD_BATCH_SIZE)
  list(APPEND ferrum_toolchain_args "-DUNITY_BUILD_BATCH_SIZE=${CMAKE_UNITY_BUILD_BATCH_SIZE}")
endif()
set(ferrum_consumer_args
  "-DCONFIG=$<CONFIG>"
  ${ferrum_toolchain_args}
  "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}")

set(ferrum_package_test "install: a consumer project finds the installed package, builds and runs")
add_test(NAME "${ferrum_package_test}"
  COMMAND "${CMAKE_COMMAND}"
    "-DFERRUM_BINARY_DIR=${PROJECT_BINARY_DIR}"
    "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_package"
    ${ferrum_consumer_args}
    -P "${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake")
set_tests_properties("${ferrum_package_test}" PROPERTIES LABELS install TIMEOUT 300)

if(FERRUM_TEST_SUBDIRECTORY_CONSUMER)
  set(ferrum_subdirectory_test
    "install: a consumer project adds ferrum with add_subdirectory, builds only its libraries and runs")
  add_test(NAME "${ferrum_subdirectory_test}"
    COMMAND "${CMAKE_COMMAND}"
      -DUSE_SUBDIRECTORY=ON
      "-DFERRUM_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_subdirectory"
      ${ferrum_toolchain_args}
      -P "${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake")
  set_tests_properties("${ferrum_subdirectory_test}" PROPERTIES LABELS install TIMEOUT 600 PROCESSORS 2)
endif()
