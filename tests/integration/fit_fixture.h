// Shared set-up for the end-to-end tests: a tiny synthetic dataset and a tiny-model config.
#pragma once

#include <filesystem>
#include <string>

#include "core/config.h"

namespace trainer::test {

// Generates (once per process) a small synthetic dataset in a temporary folder and returns its
// dataset yaml.
std::filesystem::path tiny_synthetic_dataset();

// yolo26t, 128 px, batch 4, fp32, CPU, no plots by default, 1 worker, deterministic.
core::TrainConfig tiny_fit_config(const std::filesystem::path& project, const std::string& name,
                                  int epochs);

}  // namespace trainer::test
