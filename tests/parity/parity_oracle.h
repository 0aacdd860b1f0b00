// Running the reference trainer (Ultralytics 8.4.190, installed by scripts/setup.sh into the
// project's virtual environment as a test oracle) from the parity tests.
//
// Why: parity with the reference is a tested property: each test prepares identical inputs, runs
// tests/parity/oracle.py on them and compares. Under CI=true a missing oracle fails the test, so
// CI can never go green while comparing nothing; elsewhere (a user's clone without the venv) the
// tests skip with a message saying how to install it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "test_support.h"

namespace trainer::test {

// The python that imports ultralytics 8.4.190 ($TRAINER_PYTHON, else the venv of
// scripts/setup.sh), or nullopt.
std::optional<std::string> oracle_python();

// Runs `oracle.py ARGS` offline with a private settings folder; returns its output. Fails the
// test (REQUIRE) when it exits non-zero, with the output attached.
std::string run_oracle(const std::string& python, const std::string& args);

// A reference-style data yaml (absolute `path:`) for one of the project's configs/data files.
std::filesystem::path reference_data_yaml(const std::filesystem::path& dir,
                                          const std::string& config_name,
                                          const std::filesystem::path& dataset_root);

}  // namespace trainer::test

// Skips (or, under CI=true, fails) a test case when the oracle is missing.
#define TRAINER_REQUIRE_ORACLE(var)                                        \
  const auto var = ::trainer::test::oracle_python();                       \
  if (!var) {                                                              \
    TRAINER_SKIP(                                                          \
        "ultralytics 8.4.190 not importable (run scripts/setup.sh or set " \
        "TRAINER_PYTHON)");                                                \
  }

// The shared data set `subset`, or skip (fail under CI=true).
#define TRAINER_REQUIRE_SHARED_DATA(var, subset) TRAINER_SKIP_IF_NO_SHARED_DATA(var, subset)
