# Builds and runs the consumer project (tests/install/) the way a user would,
# failing with the step that went wrong. Run as `cmake -D... -P run_consumer.cmake`;
# tests/install/install_test.cmake registers the package mode with ctest.
#
# Package mode (the default): installs ferrum's build tree FERRUM_BINARY_DIR
# into WORK_DIR/prefix, then builds the consumer with find_package(ferrum)
# against that prefix. Subdirectory mode (USE_SUBDIRECTORY=ON): builds the
# consumer with add_subdirectory(FERRUM_SOURCE_DIR) instead, and with it the
# ferrum libraries. By hand, e.g.:
#   cmake -DUSE_SUBDIRECTORY=ON -DFERRUM_SOURCE_DIR=<ferrum> -DWORK_DIR=<scratch>
#         -DGENERATOR=Ninja -P <ferrum>/tests/install/run_consumer.cmake
#
# Variables:
#   WORK_DIR            scratch folder, emptied first (required)
#   FERRUM_BINARY_DIR   ferrum's build tree, built (package mode)
#   FERRUM_SOURCE_DIR   ferrum's source tree (subdirectory mode)
#   CONFIG              build configuration, e.g. Debug (optional)
#   GENERATOR, MAKE_PROGRAM, CXX_COMPILER, CXX_FLAGS, EXE_LINKER_FLAGS,
#   UNITY_BUILD, UNITY_BUILD_BATCH_SIZE
#                       the parent build's, so that the consumer compiles and
#                       links like the libraries it links (sanitizer flags,
#                       -DBOOST_ASIO_DISABLE_STD_ATOMIC under tsan; a unity
#                       build of ferrum's libraries in subdirectory mode)
cmake_minimum_required(VERSION 3.25)

# Runs one step; stops the script with `what` and the exit status if it fails.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status COMMAND_ECHO STDOUT)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${status})")
  endif()
endfunction()

if(NOT WORK_DIR)
  message(FATAL_ERROR "install test: set WORK_DIR to a scratch folder")
endif()
set(consumer_source "${CMAKE_CURRENT_LIST_DIR}")
set(consumer_build "${WORK_DIR}/build")
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")

set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

set(configure_args -S "${consumer_source}" -B "${consumer_build}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
foreach(forwarded MAKE_PROGRAM CXX_COMPILER CXX_FLAGS EXE_LINKER_FLAGS UNITY_BUILD UNITY_BUILD_BATCH_SIZE)
  if(DEFINED ${forwarded})
    list(APPEND configure_args "-DCMAKE_${forwarded}=${${forwarded}}")
  endif()
endforeach()
if(CONFIG)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()

if(USE_SUBDIRECTORY)
  list(APPEND configure_args -DFERRUM_CONSUMER_USE_SUBDIRECTORY=ON "-DFERRUM_SOURCE_DIR=${FERRUM_SOURCE_DIR}")
else()
  if(NOT EXISTS "${FERRUM_BINARY_DIR}/cmake_install.cmake")
    message(FATAL_ERROR "install test: FERRUM_BINARY_DIR ('${FERRUM_BINARY_DIR}') is not a configured ferrum build tree")
  endif()
  run_step("installing ferrum from ${FERRUM_BINARY_DIR} (is it fully built?)"
    "${CMAKE_COMMAND}" --install "${FERRUM_BINARY_DIR}" --prefix "${prefix}" ${config_args})
  list(APPEND configure_args "-DCMAKE_PREFIX_PATH=${prefix}")
endif()

run_step("configuring the consumer" "${CMAKE_COMMAND}" ${configure_args})
if(USE_SUBDIRECTORY)
  # Not the top-level project, ferrum builds its libraries and nothing else.
  foreach(option FERRUM_BUILD_TESTS FERRUM_BUILD_TOOLS FERRUM_BUILD_BENCH FERRUM_BUILD_EXAMPLES)
    file(STRINGS "${consumer_build}/CMakeCache.txt" value REGEX "^${option}:")
    if(NOT value MATCHES "=OFF$")
      message(FATAL_ERROR "install test: as a subproject ferrum has ${option} on ('${value}')")
    endif()
  endforeach()
else()
  # The package must come from the fresh prefix, not from some other ferrum
  # installed on the machine.
  file(STRINGS "${consumer_build}/CMakeCache.txt" found_dir REGEX "^ferrum_DIR:")
  string(REGEX REPLACE "^[^=]*=" "" found_dir "${found_dir}")
  cmake_path(IS_PREFIX prefix "${found_dir}" NORMALIZE from_prefix)
  if(NOT from_prefix)
    message(FATAL_ERROR "install test: the consumer found ferrum in '${found_dir}', not under '${prefix}'")
  endif()
endif()
run_step("building the consumer" "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args})

# Single-configuration generators put the program in the build folder,
# multi-configuration ones in a folder per configuration.
set(consumer "${consumer_build}/consumer")
if(NOT EXISTS "${consumer}")
  set(consumer "${consumer_build}/${CONFIG}/consumer")
endif()
run_step("running the consumer" "${consumer}")
