# Package tests driver: cmake -D<var>=<value>... -P run_consumer.cmake
#
#   MODE=install        install this build of fp8q into WORK_DIR/prefix (fixture for the next)
#   MODE=find_package   build + run find_package_consumer against WORK_DIR/prefix; check that
#                       unknown/missing components fail with fp8q's message
#   MODE=subdirectory   build + run subdirectory_consumer (add_subdirectory of FP8Q_SOURCE_DIR)
#   MODE=fetchcontent   the same through FetchContent
#   MODE=hip            configure + install fp8q with FP8Q_ENABLE_HIP=ON, then build (not run)
#                       a consumer that requires COMPONENTS hip, compiled by HIPCC
# Common: FP8Q_SOURCE_DIR, FP8Q_BUILD_DIR, WORK_DIR, GENERATOR, CXX_COMPILER, ENABLE_CUDA,
#         CUDA_COMPILER, CUDA_ARCHS ('|'-separated), CUDA (ON: also build the CUDA consumer),
#         HIPCC, MISSING_COMPONENT (a component this install lacks, checked by find_package).
cmake_minimum_required(VERSION 3.25)

function(run)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "+ ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED (${rc}): ${shown}")
  endif()
endfunction()

# Configure must fail, and say `expected` (fp8q's not-found message).
function(run_expect_failure expected)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "+ ${shown}   (must fail)")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${out} ${err}")  # CMake wraps long messages
  if(rc EQUAL 0)
    message(FATAL_ERROR "FAILED: configure succeeded but should not have:\n${out}${err}")
  endif()
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "FAILED: message '${expected}' missing from:\n${out}${err}")
  endif()
  message(STATUS "ok: failed as expected with \"${expected}\"")
endfunction()

foreach(var MODE FP8Q_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(common -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
set(cuda_args "")
if(CUDA)
  string(REPLACE "|" ";" archs "${CUDA_ARCHS}")
  set(cuda_args -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} "-DCMAKE_CUDA_ARCHITECTURES=${archs}")
endif()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE ${prefix})
  run(${CMAKE_COMMAND} --install ${FP8Q_BUILD_DIR} --prefix ${prefix})
  if(NOT EXISTS ${prefix}/include/fp8q/format.hpp)
    message(FATAL_ERROR "FAILED: headers were not installed under ${prefix}/include")
  endif()
  file(GLOB_RECURSE configs ${prefix}/*/fp8qConfig.cmake)
  if(NOT configs)
    message(FATAL_ERROR "FAILED: no fp8qConfig.cmake under ${prefix}")
  endif()
  message(STATUS "ok: installed to ${prefix} (${configs})")

elseif(MODE STREQUAL "find_package")
  if(CUDA)
    set(build ${WORK_DIR}/find_package_cuda)
    set(components -DCONSUMER_COMPONENTS=cuda)
  else()
    set(build ${WORK_DIR}/find_package)
    set(components "")
  endif()
  file(REMOVE_RECURSE ${build})
  set(src ${CMAKE_CURRENT_LIST_DIR}/find_package_consumer)
  run(${CMAKE_COMMAND} -S ${src} -B ${build} ${common} ${cuda_args} ${components}
      -DCMAKE_PREFIX_PATH=${prefix})
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/consumer)
  if(NOT CUDA)
    run_expect_failure("Unknown component 'nonsense'"
      ${CMAKE_COMMAND} -S ${src} -B ${build}_unknown ${common} -DCMAKE_PREFIX_PATH=${prefix}
      -DCONSUMER_COMPONENTS=nonsense)
    if(MISSING_COMPONENT)
      run_expect_failure("Component '${MISSING_COMPONENT}' was not built into this fp8q install"
        ${CMAKE_COMMAND} -S ${src} -B ${build}_missing ${common} -DCMAKE_PREFIX_PATH=${prefix}
        -DCONSUMER_COMPONENTS=${MISSING_COMPONENT})
    endif()
  endif()

elseif(MODE STREQUAL "subdirectory" OR MODE STREQUAL "fetchcontent")
  set(build ${WORK_DIR}/${MODE})
  if(CUDA)
    string(APPEND build _cuda)
  endif()
  file(REMOVE_RECURSE ${build})
  if(MODE STREQUAL "fetchcontent")
    set(how -DCONSUMER_FETCHCONTENT=ON)
  else()
    set(how -DCONSUMER_FETCHCONTENT=OFF)
  endif()
  # fp8q's own CUDA detection is exercised by the main build; here it follows the parent.
  if(CUDA)
    set(fp8q_cuda -DCONSUMER_CUDA=ON -DFP8Q_ENABLE_CUDA=ON)
  else()
    set(fp8q_cuda -DCONSUMER_CUDA=OFF -DFP8Q_ENABLE_CUDA=OFF)
  endif()
  run(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/subdirectory_consumer -B ${build} ${common}
      ${cuda_args} ${how} ${fp8q_cuda} -DFP8Q_SOURCE_DIR=${FP8Q_SOURCE_DIR})
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/consumer)

elseif(MODE STREQUAL "hip")
  set(fp8q_build ${WORK_DIR}/hip_fp8q_build)
  set(hip_prefix ${WORK_DIR}/hip_prefix)
  set(build ${WORK_DIR}/find_package_hip)
  file(REMOVE_RECURSE ${fp8q_build} ${hip_prefix} ${build})
  run(${CMAKE_COMMAND} -S ${FP8Q_SOURCE_DIR} -B ${fp8q_build} ${common}
      -DFP8Q_ENABLE_HIP=ON -DFP8Q_ENABLE_CUDA=OFF -DFP8Q_BUILD_TESTS=OFF
      -DFP8Q_BUILD_EXAMPLES=OFF -DFP8Q_INSTALL=ON)
  run(${CMAKE_COMMAND} --install ${fp8q_build} --prefix ${hip_prefix})
  # hip::device compiles the consumer's CXX sources as HIP, so the compiler must be hipcc.
  run(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/find_package_consumer -B ${build}
      -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${HIPCC}
      -DCONSUMER_COMPONENTS=hip -DGPU_TARGETS=gfx940 -DCMAKE_PREFIX_PATH=${hip_prefix})
  run(${CMAKE_COMMAND} --build ${build} --target consumer_hip)

else()
  message(FATAL_ERROR "run_consumer.cmake: unknown MODE '${MODE}'")
endif()
