// Errors the user can act on: each names the file (and line) or key that caused it.
//
// Why: bad input must stop the run with a message that says where to look; one exception type per
// kind of mistake lets the CLI print it plainly and exit non-zero without a stack of context.
#pragma once

#include <stdexcept>
#include <string>

namespace trainer::core {

// Where a value came from: a file and 1-based line (0 = unknown), or the command line.
struct SourceLocation {
  std::string file;  // empty = command line
  int line = 0;

  std::string describe() const;  // "configs/x.yaml:12" or "command line"
};

// A configuration problem (unknown key, wrong type, out of range, missing or malformed file).
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const SourceLocation& where, const std::string& message);
  explicit ConfigError(const std::string& message);
};

// A problem in input data (an annotation file, a results file, a label file, an image): the
// message names the file and the entry (id, line) that is wrong.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace trainer::core
