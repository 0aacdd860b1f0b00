# Sanitizer builds, each in its own build folder so the normal gcc build is unchanged.
#
# Why: the data and config readers take bytes from users (yaml, json, label text, image headers,
# checkpoints); AddressSanitizer and UBSan turn a silent out-of-bounds read or overflow there into a
# failing test, and libFuzzer searches for such inputs.
# - TRAINER_SANITIZE=ON (scripts/build.sh --sanitize -> build-asan/): trainer_sanitize(target)
#   adds ASan + UBSan to the targets that call it: trainer_core and trainer_runtime, trainer_data
#   and its codecs, the precompiled LibTorch header (gcc needs its users to match), the tests of
#   tests/core and tests/data and the fuzz replays. A UBSan finding stops the test (no recover).
# - TRAINER_FUZZ=ON (scripts/fuzz.sh -> build-fuzz/, clang only): every target is compiled with
#   libFuzzer's coverage hooks plus ASan + UBSan; trainer_fuzz_link(target) links libFuzzer's
#   main into the tests/fuzz executables.
option(TRAINER_SANITIZE "ASan + UBSan on the core and data libraries and their tests" OFF)
option(TRAINER_FUZZ "libFuzzer targets (clang): instrument every target, build tests/fuzz" OFF)

set(TRAINER_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                            -fno-sanitize-recover=undefined)

if(TRAINER_SANITIZE AND TRAINER_FUZZ)
  message(FATAL_ERROR "TRAINER_SANITIZE and TRAINER_FUZZ need separate build folders")
endif()

if(TRAINER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TRAINER_FUZZ=ON needs clang++ (libFuzzer); configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (scripts/fuzz.sh does)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link ${TRAINER_SANITIZER_FLAGS})
  add_link_options(-fsanitize=address,undefined)
endif()

function(trainer_sanitize target)
  if(TRAINER_SANITIZE)
    target_compile_options(${target} PRIVATE ${TRAINER_SANITIZER_FLAGS})
    # PUBLIC so that whatever links the library links the sanitizer runtimes too.
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()

function(trainer_fuzz_link target)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
endfunction()
