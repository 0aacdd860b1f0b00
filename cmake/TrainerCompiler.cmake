# Compiler settings shared by every target: warnings, ccache, and a helper for LibTorch PCH reuse.

# Debug info at -g1 (function names and line tables: backtraces, sanitizer reports and perf keep
# working) instead of -g: full DWARF for LibTorch's templates doubled the compile time of a
# LibTorch translation unit (training_context.cpp: 33.5 s at -g, 21.2 s at -g1, 17.4 s without)
# and made objects 1.7x larger, on a 2-core machine where CI compiles from cold. Code generation
# does not depend on -g. A flag set on the command line is kept.
if(CMAKE_CXX_FLAGS_RELWITHDEBINFO STREQUAL "-O2 -g -DNDEBUG")
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -g1 -DNDEBUG")
endif()

option(TRAINER_USE_CCACHE "Compile through ccache when it is installed" ON)
find_program(TRAINER_CCACHE ccache)
if(TRAINER_USE_CCACHE AND TRAINER_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # Sloppiness lets ccache cache translation units that use a precompiled header; the base dir
  # and NOHASHDIR make a fresh clone in another folder (CI) hit the same cache entries: with debug
  # info ccache otherwise hashes the working directory, and every clone missed every entry. (The
  # price: debug info names the folder of the build that filled the cache.)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      "CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}" CCACHE_NOHASHDIR=1 ${TRAINER_CCACHE})
endif()

# Unity builds: every LibTorch translation unit pays a fixed cost for the precompiled torch/torch.h
# before its own first line (GCC re-instantiates the header's pending templates in each one: 9.6 s
# user + 5 s system for an empty file here, 2026-12-07), so a target's sources are compiled
# TRAINER_UNITY_BATCH at a time in one unit. File-local names stay unique within a library, so the
# build without unity (-DTRAINER_UNITY=OFF, which CI's sanitizer build uses) stays correct.
option(TRAINER_UNITY "Compile each target's sources in batches (unity build)" ON)
set(TRAINER_UNITY_BATCH 8 CACHE STRING "Source files per unity translation unit")
if(TRAINER_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${TRAINER_UNITY_BATCH})
endif()

# The linker: lld when installed. GNU ld took 1.6-4.0 s to link `trainer` here and lld 0.3-0.9 s
# (three rounds each, the same objects, 2026-12-07); every test binary and every one-file rebuild
# pays a link. TRAINER_LINKER=system keeps the compiler's default; lld, mold, gold or bfd names one.
set(TRAINER_LINKER auto CACHE STRING "Linker for executables: auto (lld when installed), system, lld, mold, gold, bfd")
set(trainer_linker ${TRAINER_LINKER})
if(trainer_linker STREQUAL "auto")
  find_program(TRAINER_LLD NAMES ld.lld)
  set(trainer_linker system)
  if(TRAINER_LLD AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    set(trainer_linker lld)
  endif()
endif()
if(NOT trainer_linker STREQUAL "system")
  add_link_options($<$<LINK_LANGUAGE:CXX>:-fuse-ld=${trainer_linker}>)
endif()
message(STATUS "trainer: linker ${trainer_linker}")

add_library(trainer_warnings INTERFACE)
target_compile_options(trainer_warnings INTERFACE -Wall -Wextra -Wpedantic
                                                  $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                                                  -Wno-unused-parameter)  # clang: no =local
if(TRAINER_UNITY)
  # GCC warns when a class uses a type from an anonymous namespace outside "the main file", meant
  # for headers; in a unity unit every .cpp is such a file, so the warning would flag sound code.
  target_compile_options(trainer_warnings INTERFACE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
endif()
if(TRAINER_WERROR)
  target_compile_options(trainer_warnings INTERFACE -Werror)
endif()

# trainer_module(NAME SOURCES ... DEPS ... [TORCH]): a static library for one lib/ folder.
# TORCH modules link LibTorch and reuse the shared precompiled header.
function(trainer_module name)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE trainer_warnings)
  if(ARG_TORCH)
    target_link_libraries(${name} PUBLIC trainer_torch)
    trainer_use_torch_pch(${name})
  endif()
endfunction()
