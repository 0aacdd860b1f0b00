// The run folder: runs/<task>/<name>, with the reference trainer's increment rule.
//
// Why: every run gets its own folder so results are never overwritten; `train` is followed by
// `train2`, `train3`, ... unless `exist_ok` asks to reuse the folder. Two runs started at the same
// moment must never take the same folder, so a new folder is claimed with a mkdir that fails when
// the name exists (then the next name is tried), not chosen first and created later.
#pragma once

#include <filesystem>

#include "core/config.h"

namespace trainer::core {

// The folder a run would use (no side effects): `project` (default runs/<task>) / `name`, with the
// first free increment `name2`, `name3`, ... when `name` exists and `exist_ok` is false. Another
// process may take it before it is created: create_run_dir() is the one that claims.
std::filesystem::path choose_run_dir(const RunConfig& run);

// A run folder claimed by this process that it may still give back. Unless keep() is called, the
// destructor removes the folder, the parent folders the claim created (when empty) and its log
// file from the logger: a command that fails in set-up leaves no folder behind, and the next run
// takes the name the failed one would have had. A folder that existed before (`exist_ok`) is
// never removed. Movable, not copyable.
class ClaimedRunDir {
 public:
  ClaimedRunDir() = default;
  explicit ClaimedRunDir(const RunConfig& run);  // claims as create_run_dir does
  ClaimedRunDir(ClaimedRunDir&& other) noexcept;
  ClaimedRunDir& operator=(ClaimedRunDir&& other) noexcept;
  ClaimedRunDir(const ClaimedRunDir&) = delete;
  ClaimedRunDir& operator=(const ClaimedRunDir&) = delete;
  ~ClaimedRunDir();

  const std::filesystem::path& path() const { return dir_; }
  void keep() { owned_ = false; }  // the command got far enough: the folder is its output

 private:
  void give_back() noexcept;

  std::filesystem::path dir_;
  std::filesystem::path first_created_;  // the outermost folder the claim created
  bool owned_ = false;
};

// Claims the run's folder: with `exist_ok` the named folder (created when missing, and shared with
// whatever is there: see RunLock), else the first name of the increment sequence that this call
// creates itself, atomically. Throws std::runtime_error naming the path.
std::filesystem::path create_run_dir(const RunConfig& run);

// True when `dir` holds a run this tool made: its args.yaml and its weights/ folder. A checkpoint
// copied elsewhere (~/dl/last.ckpt) is not inside one, so resuming it must not write beside it.
bool is_run_folder(const std::filesystem::path& dir);

}  // namespace trainer::core
