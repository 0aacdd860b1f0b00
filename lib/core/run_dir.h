// The run folder: runs/<task>/<name>, with the reference trainer's increment rule.
//
// Why: every run gets its own folder so results are never overwritten; `train` is followed by
// `train2`, `train3`, ... unless `exist_ok` asks to reuse the folder.
#pragma once

#include <filesystem>

#include "core/config.h"

namespace trainer::core {

// The folder a run would use (no side effects): `project` (default runs/<task>) / `name`, with the
// first free increment `name2`, `name3`, ... when `name` exists and `exist_ok` is false.
std::filesystem::path choose_run_dir(const RunConfig& run);

// choose_run_dir() then create it (and parents). Throws std::runtime_error naming the path.
std::filesystem::path create_run_dir(const RunConfig& run);

}  // namespace trainer::core
