// Helpers shared by the fuzz targets: the input as text, split into parts, and a check that stops
// the run with a message.
//
// Why: every target turns libFuzzer's bytes into the arguments of one project entry point; a broken
// invariant must crash loudly (libFuzzer then saves the input) in the fuzzer and in the ctest
// replay alike, so it aborts instead of using assert (compiled out in release builds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace trainer::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Splits at every '\0': the first part is the main text, the rest are extra arguments (overrides).
inline std::vector<std::string> split_at_nul(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == '\0') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

// An expected error (the documented exception): printed when TRAINER_FUZZ_VERBOSE is set, so
// a replay shows what each input came to.
inline void expected_error(const std::exception& e) {
  static const bool verbose = std::getenv("TRAINER_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "expected error: %s\n", e.what());
}

[[noreturn]] inline void invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace trainer::fuzz

#define FUZZ_CHECK(condition) \
  ((condition) ? (void)0 : ::trainer::fuzz::invariant_failed(#condition, __FILE__, __LINE__))

// Each target defines this (libFuzzer's entry point); replay_main.cpp calls it in the gcc build.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
