// Tested by tests/core/test_config_errors.cpp: ConfigError message prefix from
//   SourceLocation::describe (file:line, command line).
#include "core/error.h"

namespace trainer::core {

std::string SourceLocation::describe() const {
  if (file.empty()) return "command line";
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

ConfigError::ConfigError(const SourceLocation& where, const std::string& message)
    : std::runtime_error(where.describe() + ": " + message) {}

ConfigError::ConfigError(const std::string& message) : std::runtime_error(message) {}

}  // namespace trainer::core
