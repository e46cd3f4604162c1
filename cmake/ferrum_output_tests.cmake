# Tests that check what a command prints as well as how it exits.
#
# CTest's PASS_REGULAR_EXPRESSION makes CTest ignore a test's exit code: a
# program that prints its matched line and then fails a later check passes.
# So no test of ferrum's sets it (a ctest, tests/tools/check_pass_expressions.py,
# fails if one does); a test that must print something is made with
# ferrum_output_test, which checks both (cmake/expect_output.sh).

set(FERRUM_EXPECT_OUTPUT "${CMAKE_CURRENT_LIST_DIR}/expect_output.sh")

# ferrum_output_test(NAME <name> EXIT_CODE <status> OUTPUT <regex>
#                    COMMAND <command> [<arg>...] [LABELS <label>...]
#                    [ENVIRONMENT <var=value>...] [PROPERTIES <property> <value>...])
# A test that passes when <command> exits <status> and prints something that
# <regex> (a grep -E pattern over the whole output) matches. LABELS and
# ENVIRONMENT are lists (the test's properties of those names); an
# ENVIRONMENT's LD_PRELOAD goes to <command> alone. PROPERTIES: others, each
# with one value.
function(ferrum_output_test)
  cmake_parse_arguments(arg "" "NAME;EXIT_CODE;OUTPUT" "COMMAND;LABELS;ENVIRONMENT;PROPERTIES" ${ARGN})
  if(NOT arg_NAME OR "${arg_EXIT_CODE}" STREQUAL "" OR NOT arg_OUTPUT OR NOT arg_COMMAND)
    message(FATAL_ERROR "ferrum_output_test: NAME, EXIT_CODE, OUTPUT and COMMAND are required")
  endif()
  add_test(NAME "${arg_NAME}" COMMAND sh "${FERRUM_EXPECT_OUTPUT}" "${arg_EXIT_CODE}" "${arg_OUTPUT}" ${arg_COMMAND})
  # The validation layers' checks, as in every test (cmake/ferrum_sanitizers.cmake),
  # unless ENVIRONMENT names its own.
  set(layer_enables ${arg_ENVIRONMENT})
  list(FILTER layer_enables INCLUDE REGEX "^VK_LAYER_ENABLES=")
  if(NOT layer_enables)
    set_tests_properties("${arg_NAME}" PROPERTIES ENVIRONMENT_MODIFICATION "${FERRUM_VALIDATION_ENABLES_MODIFICATION}")
  endif()
  if(arg_LABELS)
    set_tests_properties("${arg_NAME}" PROPERTIES LABELS "${arg_LABELS}")
  endif()
  if(arg_ENVIRONMENT)
    list(TRANSFORM arg_ENVIRONMENT REPLACE "^LD_PRELOAD=" "FERRUM_TEST_LD_PRELOAD=")
    set_tests_properties("${arg_NAME}" PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}")
  endif()
  if(arg_PROPERTIES)
    set_tests_properties("${arg_NAME}" PROPERTIES ${arg_PROPERTIES})
  endif()
endfunction()
