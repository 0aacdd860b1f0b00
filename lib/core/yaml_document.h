// Every YAML file trainer reads (configs, dataset yamls, args.yaml) goes through here.
//
// Why: yaml-cpp accepts a key given twice in one mapping, and each caller then kept a different one
// (the dataset yaml the first, the config the last), so a pasted line silently changed what was
// trained on. Here a repeated key is an error naming the key and both lines, and a syntax error
// names its line, the same way for every file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

namespace trainer::core {

// Parses `text` (shown to the user as `display_name`); throws ConfigError for malformed YAML and
// for a key repeated in any mapping of the document.
YAML::Node parse_yaml_document(const std::string& text, const std::string& display_name);

// Reads and parses a file; throws ConfigError when it cannot be read.
YAML::Node load_yaml_file(const std::filesystem::path& file);

// The top-level key whose entry spans 1-based `line` of a mapping document ("" when none): names
// the key in a message about a value yaml-cpp could not convert, which only knows the line.
std::string top_level_key_at_line(const YAML::Node& root, int line);

// The text of the scalar at yaml-cpp's 0-based mark (line, column) inside `node`, "" when none.
std::string scalar_at_mark(const YAML::Node& node, const YAML::Mark& mark);

}  // namespace trainer::core
