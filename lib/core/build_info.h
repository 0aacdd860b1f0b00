// What was built: trainer version, git revision and dirty flag, CUDA compiled in, build type.
//
// Why: every printed version line and benchmark JSON must say exactly which code produced it.
// The values come from a file generated at build time (cmake/WriteBuildInfo.cmake).
#pragma once

#include <string>

namespace trainer::core {

struct BuildInfo {
  std::string version;
  std::string git_revision;
  bool git_dirty = false;
  bool with_cuda = false;
  std::string build_type;
};

const BuildInfo& build_info();

}  // namespace trainer::core
