// Console and run-folder logging through spdlog.
//
// Why: the console shows progress at the chosen verbosity while the run folder keeps a complete log
// beside the results; only rank 0 writes files, so a data-parallel run logs once.
#pragma once

#include <filesystem>

namespace trainer::core {

enum class Verbosity { kQuiet, kNormal, kVerbose };

// Sets the default logger: console at `verbosity` (quiet = warnings and errors only). Idempotent.
void init_console_logging(Verbosity verbosity, int rank = 0);

// Adds `dir/<file_name>` (debug level, all messages) to the default logger on rank 0.
void add_run_log_file(const std::filesystem::path& dir, int rank = 0,
                      const char* file_name = "train.log");

// Detaches (and closes) every log file under `dir` from the default logger: a run folder given
// back (core::ClaimedRunDir) takes its train.log with it.
void remove_run_log_files(const std::filesystem::path& dir) noexcept;

}  // namespace trainer::core
