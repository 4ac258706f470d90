# Compiles one spec_compile_fail/*.cpp with -fsyntax-only and checks the outcome against the
# file's first line, "// expect: <message substring>" (the compile must FAIL and print it) or
# "// expect: <compiles>" (a control that must compile).
# Usage: cmake -DCXX=<compiler> -DSOURCE=<file.cpp> -DINCLUDE=<include dir> -P expect_failure.cmake
foreach(v CXX SOURCE INCLUDE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "expect_failure.cmake: -D${v}=... is required")
  endif()
endforeach()
file(STRINGS "${SOURCE}" expect_line LIMIT_COUNT 1 REGEX "^// expect: ")
if(NOT expect_line)
  message(FATAL_ERROR "${SOURCE}: no '// expect: ' line")
endif()
string(REGEX REPLACE "^// expect: " "" expected "${expect_line}")
execute_process(
  COMMAND "${CXX}" -std=c++20 -fsyntax-only -I "${INCLUDE}" "${SOURCE}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(expected STREQUAL "<compiles>")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} should compile but failed:\n${err}")
  endif()
  message(STATUS "compiles, as expected")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must fail with \"${expected}\"")
endif()
string(FIND "${out}${err}" "${expected}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${SOURCE} failed to compile, but without \"${expected}\":\n${err}")
endif()
message(STATUS "fails with \"${expected}\", as expected")
