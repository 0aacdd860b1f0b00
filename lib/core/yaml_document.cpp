// See yaml_document.h.
#include "core/yaml_document.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"

namespace trainer::core {
namespace {

int line_of(const YAML::Node& node) {
  return node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
}

void refuse_repeated_keys(const YAML::Node& node, const std::string& file) {
  if (node.IsSequence()) {
    for (const auto& item : node) refuse_repeated_keys(item, file);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> first_line;
  for (const auto& entry : node) {
    if (entry.first.IsScalar()) {
      const auto [it, fresh] = first_line.emplace(entry.first.Scalar(), line_of(entry.first));
      if (!fresh) {
        throw ConfigError(SourceLocation{file, line_of(entry.first)},
                          fmt::format("key '{}' is given twice (first at line {}); keep one",
                                      entry.first.Scalar(), it->second));
      }
    }
    refuse_repeated_keys(entry.second, file);
  }
}

}  // namespace

YAML::Node parse_yaml_document(const std::string& text, const std::string& display_name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(SourceLocation{display_name, e.mark.line + 1}, "malformed YAML: " + e.msg);
  }
  refuse_repeated_keys(root, display_name);
  return root;
}

YAML::Node load_yaml_file(const std::filesystem::path& file) {
  if (std::filesystem::is_directory(file)) {
    throw ConfigError(file.string() + " is a folder, not a yaml file");
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) throw ConfigError("cannot read " + file.string());
  return parse_yaml_document(text.str(), file.string());
}

std::string top_level_key_at_line(const YAML::Node& root, int line) {
  if (!root.IsMap()) return "";
  std::string key;
  for (const auto& entry : root) {
    if (line_of(entry.first) > line) break;
    key = entry.first.IsScalar() ? entry.first.Scalar() : "";
  }
  return key;
}

std::string scalar_at_mark(const YAML::Node& node, const YAML::Mark& mark) {
  if (node.IsScalar()) {
    return node.Mark().line == mark.line && node.Mark().column == mark.column ? node.Scalar() : "";
  }
  if (node.IsSequence()) {
    for (const auto& item : node) {
      if (std::string found = scalar_at_mark(item, mark); !found.empty()) return found;
    }
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      if (std::string found = scalar_at_mark(entry.second, mark); !found.empty()) return found;
    }
  }
  return "";
}

}  // namespace trainer::core
