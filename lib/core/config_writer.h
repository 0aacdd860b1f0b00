// Writing a TrainConfig back out: as YAML that loads to the same struct, and as a table for people.
//
// Why: every run saves the resolved config (`args.yaml`) so it can be repeated, and prints it at
// start so the user sees what will actually run; both come from the same key registry.
#pragma once

#include <filesystem>
#include <string>

#include "core/config.h"

namespace trainer::core {

// YAML with one `key: value` per field, grouped under `# section` comments, in registry order.
std::string config_to_yaml(const TrainConfig& config);

// Writes config_to_yaml() atomically (temporary file, then rename). Throws ConfigError on I/O
// errors.
void write_config_yaml(const TrainConfig& config, const std::filesystem::path& file);

// An aligned table: section, key, value; values that differ from the default are marked with '*'.
std::string config_table(const TrainConfig& config);

}  // namespace trainer::core
