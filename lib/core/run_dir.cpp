#include "core/run_dir.h"

#include <stdexcept>
#include <string>
#include <system_error>

namespace fs = std::filesystem;

namespace trainer::core {

fs::path choose_run_dir(const RunConfig& run) {
  const fs::path project = run.project.empty()
                               ? fs::path("runs") / task_name(run.task.value_or(Task::kDetect))
                               : fs::path(run.project);
  const std::string name = run.name.empty() ? "train" : run.name;
  fs::path dir = project / name;
  if (run.exist_ok || !fs::exists(dir)) return dir;
  for (int n = 2; n < 100000; ++n) {
    fs::path candidate = project / (name + std::to_string(n));
    if (!fs::exists(candidate)) return candidate;
  }
  throw std::runtime_error("no free run folder name under " + project.string());
}

fs::path create_run_dir(const RunConfig& run) {
  const fs::path dir = choose_run_dir(run);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error("cannot create run folder " + dir.string() + ": " + ec.message());
  return dir;
}

}  // namespace trainer::core
