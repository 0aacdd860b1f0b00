# Finds LibTorch and defines `trainer_torch`, the one target every LibTorch user links.
#
# Where LibTorch comes from: CMAKE_PREFIX_PATH (scripts/setup.sh passes the pinned wheel's
# torch.utils.cmake_prefix_path) or -DTorch_DIR=<prefix>/share/cmake/Torch for any other LibTorch
# (the official archive, a container's torch).
#
# CUDA: with TRAINER_CUDA=ON (or AUTO when the LibTorch has CUDA and nvcc is found) we use Torch's
# own find_package, which needs the CUDA toolkit, and define TRAINER_WITH_CUDA=1. Otherwise we import
# only libtorch_cpu and libc10 from the same LibTorch: a CPU build that loads no CUDA library and
# configures on a machine without a toolkit, even from a CUDA wheel.

find_file(TRAINER_TORCH_CONFIG TorchConfig.cmake
          HINTS ${Torch_DIR} PATH_SUFFIXES share/cmake/Torch Torch NO_CACHE)
if(NOT TRAINER_TORCH_CONFIG)
  message(FATAL_ERROR "LibTorch not found. Run scripts/setup.sh, or pass "
                      "-DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') "
                      "or -DTorch_DIR=<libtorch>/share/cmake/Torch")
endif()
get_filename_component(_torch_cmake_dir "${TRAINER_TORCH_CONFIG}" DIRECTORY)
get_filename_component(TRAINER_TORCH_PREFIX "${_torch_cmake_dir}/../../.." ABSOLUTE)

set(_torch_has_cuda OFF)
if(EXISTS "${TRAINER_TORCH_PREFIX}/lib/libtorch_cuda.so")
  set(_torch_has_cuda ON)
endif()
find_program(TRAINER_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)

if(TRAINER_CUDA STREQUAL "AUTO")
  if(_torch_has_cuda AND TRAINER_NVCC)
    set(TRAINER_WITH_CUDA ON)
  else()
    set(TRAINER_WITH_CUDA OFF)
  endif()
elseif(TRAINER_CUDA)
  if(NOT _torch_has_cuda)
    message(FATAL_ERROR "TRAINER_CUDA=ON but ${TRAINER_TORCH_PREFIX} has no libtorch_cuda.so")
  endif()
  if(NOT TRAINER_NVCC)
    message(FATAL_ERROR "TRAINER_CUDA=ON needs the CUDA toolkit (nvcc) at configure time")
  endif()
  set(TRAINER_WITH_CUDA ON)
else()
  set(TRAINER_WITH_CUDA OFF)
endif()

# LibTorch ships its own {fmt} (v12) in include/fmt, which would shadow Debian's {fmt} 9 that spdlog
# is built against. We expose LibTorch's headers through a mirror folder without `fmt`.
set(TRAINER_TORCH_INCLUDE "${PROJECT_BINARY_DIR}/torch_include")
file(MAKE_DIRECTORY "${TRAINER_TORCH_INCLUDE}")
file(GLOB _torch_include_entries RELATIVE "${TRAINER_TORCH_PREFIX}/include"
     "${TRAINER_TORCH_PREFIX}/include/*")
foreach(_entry IN LISTS _torch_include_entries)
  if(NOT _entry STREQUAL "fmt" AND NOT EXISTS "${TRAINER_TORCH_INCLUDE}/${_entry}")
    file(CREATE_LINK "${TRAINER_TORCH_PREFIX}/include/${_entry}" "${TRAINER_TORCH_INCLUDE}/${_entry}"
         SYMBOLIC)
  endif()
endforeach()
set(TRAINER_TORCH_INCLUDE_DIRS "${TRAINER_TORCH_INCLUDE}"
                               "${TRAINER_TORCH_INCLUDE}/torch/csrc/api/include")

add_library(trainer_torch INTERFACE)
if(TRAINER_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER "${TRAINER_NVCC}")
  endif()
  get_filename_component(_cuda_bin "${TRAINER_NVCC}" DIRECTORY)
  get_filename_component(CUDAToolkit_ROOT "${_cuda_bin}/.." ABSOLUTE)
  if(NOT TORCH_CUDA_ARCH_LIST)
    set(TORCH_CUDA_ARCH_LIST "8.9;9.0")  # L4 and H100/H200; only matters for our own kernels
  endif()
  find_package(Torch REQUIRED PATHS "${_torch_cmake_dir}" NO_DEFAULT_PATH)
  foreach(_t torch torch_cpu torch_cuda c10 c10_cuda)
    if(TARGET ${_t})
      set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${TRAINER_TORCH_INCLUDE_DIRS}")
    endif()
  endforeach()
  target_link_libraries(trainer_torch INTERFACE ${TORCH_LIBRARIES})
  target_compile_definitions(trainer_torch INTERFACE TRAINER_WITH_CUDA=1)
else()
  file(STRINGS "${TRAINER_TORCH_CONFIG}" _abi_line REGEX "_GLIBCXX_USE_CXX11_ABI=[01]")
  string(REGEX MATCH "_GLIBCXX_USE_CXX11_ABI=[01]" _abi_flag "${_abi_line}")
  find_library(TRAINER_TORCH_CPU_LIB torch_cpu PATHS "${TRAINER_TORCH_PREFIX}/lib" NO_DEFAULT_PATH)
  find_library(TRAINER_C10_LIB c10 PATHS "${TRAINER_TORCH_PREFIX}/lib" NO_DEFAULT_PATH)
  if(NOT TRAINER_TORCH_CPU_LIB OR NOT TRAINER_C10_LIB)
    message(FATAL_ERROR "libtorch_cpu/libc10 not found under ${TRAINER_TORCH_PREFIX}/lib")
  endif()
  target_include_directories(trainer_torch SYSTEM INTERFACE ${TRAINER_TORCH_INCLUDE_DIRS})
  target_link_libraries(trainer_torch INTERFACE ${TRAINER_TORCH_CPU_LIB} ${TRAINER_C10_LIB})
  if(_abi_flag)
    target_compile_definitions(trainer_torch INTERFACE ${_abi_flag})
  endif()
endif()
target_compile_definitions(trainer_torch INTERFACE TRAINER_HAS_TORCH=1)

# The precompiled LibTorch header, built once and reused by every LibTorch module and test.
add_library(trainer_torch_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cpp)
target_link_libraries(trainer_torch_pch PUBLIC trainer_torch PRIVATE trainer_warnings)
if(TRAINER_PCH)
  target_precompile_headers(trainer_torch_pch PRIVATE <torch/torch.h>)
endif()
# gcc refuses a precompiled header built without the sanitizers in a sanitized translation unit
# (__SANITIZE_ADDRESS__ differs), so in the sanitizer build every PCH user is sanitized with it.
trainer_sanitize(trainer_torch_pch)

function(trainer_use_torch_pch target)
  if(TRAINER_PCH)
    target_precompile_headers(${target} REUSE_FROM trainer_torch_pch)
  endif()
endfunction()
