// Loading a TrainConfig: defaults <- base configs <- the config file <- `key=value` overrides.
//
// Why: one function turns what the user wrote into a validated struct, or stops with an error that
// names the file, line and key (and the closest valid key for a typo). Nothing is written here.
//
// Rules (documented in README "Configuration"):
// - keys are the reference trainer's names (a user's Ultralytics args.yaml loads); reference keys
// we
//   do not use are accepted and reported as notes;
// - `base: other.yaml` names a config this one extends (relative to this file; chains allowed,
//   cycles are an error);
// - paths in a file (`data`, a model yaml) are relative to that file; on the command line, to the
//   working directory; both are stored absolute;
// - a YAML null (`name: null`) means the default.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/error.h"

namespace trainer::core {

struct ConfigNote {
  SourceLocation where;
  std::string message;
};

struct LoadedConfig {
  TrainConfig config;
  std::vector<std::filesystem::path> files;  // the base chain, outermost base first
  std::vector<ConfigNote> notes;             // ignored reference keys and similar remarks
};

// `file` may be empty: then defaults plus overrides. Throws ConfigError.
LoadedConfig load_config(const std::filesystem::path& file,
                         const std::vector<std::string>& overrides = {});

// Parses YAML text as if it were the file `display_name` in `base_dir` (used by tests and stdin).
LoadedConfig load_config_text(const std::string& yaml_text, const std::string& display_name,
                              const std::filesystem::path& base_dir,
                              const std::vector<std::string>& overrides = {});

// Applies one `key=value` (value parsed as a YAML scalar or list). Throws ConfigError.
void apply_override(TrainConfig& config, const std::string& key_equals_value,
                    std::vector<ConfigNote>* notes = nullptr);

}  // namespace trainer::core
