# fp8q_cuda_std20(<target> [BUILD_ONLY])
#
# Makes CUDA sources that link <target> compile as C++20, in the form the running CMake
# understands: the cuda_std_20 compile feature where CMake knows it for the CUDA compiler in
# use, otherwise -std=c++20 on CUDA sources (CMake 3.25 lacks the feature for nvcc; CMake 4
# has it). Used in-tree (BUILD_ONLY) and again by fp8qConfig.cmake on the imported fp8q::cuda,
# because the consumer's CMake may differ from the one that installed fp8q.
function(fp8q_cuda_std20 target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "BUILD_ONLY" "" "")
  if("cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
    set(property INTERFACE_COMPILE_FEATURES)
    set(value cuda_std_20)
  else()
    set(property INTERFACE_COMPILE_OPTIONS)
    set(value "$<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>")
  endif()
  if(arg_BUILD_ONLY)
    set(value "$<BUILD_INTERFACE:${value}>")
  endif()
  set_property(TARGET ${target} APPEND PROPERTY ${property} "${value}")
endfunction()
