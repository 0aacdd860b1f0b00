// The argument convention every config-taking subcommand shares: an optional CONFIG file (the
// first argument without '='), then key=value overrides.
#pragma once

#include <string>
#include <vector>

namespace trainer::app {

struct ConfigArgs {
  std::string file;                    // empty: defaults only
  std::vector<std::string> overrides;  // key=value, in order
};

inline ConfigArgs split_config_args(const std::vector<std::string>& args) {
  ConfigArgs out;
  for (const auto& a : args) {
    if (out.file.empty() && out.overrides.empty() && a.find('=') == std::string::npos) {
      out.file = a;
    } else {
      out.overrides.push_back(a);
    }
  }
  return out;
}

}  // namespace trainer::app
