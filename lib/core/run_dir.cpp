// See run_dir.h.
#include "core/run_dir.h"

#include "core/logging.h"

#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace fs = std::filesystem;

namespace trainer::core {
namespace {

constexpr int kMaxIncrement = 100000;

fs::path project_dir(const RunConfig& run) {
  return run.project.empty() ? fs::path("runs") / task_name(run.task.value_or(Task::kDetect))
                             : fs::path(run.project);
}

std::string base_name(const RunConfig& run) {
  return run.name.empty() ? "train" : run.name;
}

fs::path candidate(const fs::path& project, const std::string& name, int n) {
  return project / (n == 1 ? name : name + std::to_string(n));
}

}  // namespace

fs::path choose_run_dir(const RunConfig& run) {
  const fs::path project = project_dir(run);
  const std::string name = base_name(run);
  if (run.exist_ok) return project / name;
  for (int n = 1; n < kMaxIncrement; ++n) {
    fs::path dir = candidate(project, name, n);
    if (!fs::exists(dir)) return dir;
  }
  throw std::runtime_error("no free run folder name under " + project.string());
}

fs::path create_run_dir(const RunConfig& run) {
  const fs::path project = project_dir(run);
  const std::string name = base_name(run);
  std::error_code ec;
  fs::create_directories(project, ec);
  if (ec) {
    throw fs::filesystem_error("cannot create run folder", project, ec);
  }
  if (run.exist_ok) {
    const fs::path dir = project / name;
    fs::create_directories(dir, ec);
    if (ec) throw fs::filesystem_error("cannot create run folder", dir, ec);
    return dir;
  }
  for (int n = 1; n < kMaxIncrement; ++n) {
    const fs::path dir = candidate(project, name, n);
    // create_directory is mkdir: true only for the caller that made it; false (no error) when the
    // name exists, whoever made it, so the next name is tried.
    if (fs::create_directory(dir, ec)) return dir;
    if (ec && !fs::exists(dir))  // a file of that name is taken as a taken name, too
      throw fs::filesystem_error("cannot create run folder", dir, ec);
  }
  throw std::runtime_error("no free run folder name under " + project.string());
}

ClaimedRunDir::ClaimedRunDir(const RunConfig& run) {
  std::error_code ec;
  // The outermost missing folder on the way (runs/, runs/detect/, the run's own) before claiming.
  fs::path outermost_missing;
  for (fs::path p = fs::absolute(choose_run_dir(run)); !p.empty() && !fs::exists(p, ec);
       p = p.parent_path()) {
    outermost_missing = p;
    if (p == p.parent_path()) break;
  }
  dir_ = create_run_dir(run);
  owned_ = !outermost_missing.empty() || !run.exist_ok;
  first_created_ = outermost_missing.empty() ? fs::absolute(dir_) : outermost_missing;
}

ClaimedRunDir::ClaimedRunDir(ClaimedRunDir&& other) noexcept
    : dir_(std::move(other.dir_)),
      first_created_(std::move(other.first_created_)),
      owned_(other.owned_) {
  other.owned_ = false;
}

ClaimedRunDir& ClaimedRunDir::operator=(ClaimedRunDir&& other) noexcept {
  if (this != &other) {
    give_back();
    dir_ = std::move(other.dir_);
    first_created_ = std::move(other.first_created_);
    owned_ = other.owned_;
    other.owned_ = false;
  }
  return *this;
}

ClaimedRunDir::~ClaimedRunDir() {
  give_back();
}

void ClaimedRunDir::give_back() noexcept {
  if (!owned_) return;
  owned_ = false;
  std::error_code ec;
  remove_run_log_files(dir_);
  fs::remove_all(dir_, ec);
  // The parents the claim made, innermost first, while empty (fs::remove leaves a full folder).
  const fs::path stop = first_created_.parent_path();
  for (fs::path p = fs::absolute(dir_).parent_path();
       !p.empty() && p != stop && p != p.parent_path(); p = p.parent_path()) {
    if (!fs::remove(p, ec)) break;
  }
}

bool is_run_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "args.yaml", ec) && fs::is_directory(dir / "weights", ec);
}

}  // namespace trainer::core
