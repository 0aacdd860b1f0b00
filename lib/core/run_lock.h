// One live run per run folder: a lock file (RUN/trainer.lock) holding the host and pid.
//
// Why: `exist_ok=true`, a resume, or a second `trainer fit` on a finished run's folder would
// otherwise write into a folder that a live run is writing (its results.csv rewritten, its
// temporary files removed as stale). The lock is an flock(2) on the file, so the kernel drops it
// when the holder dies however it dies: a lock left by a killed run is stale by construction and
// taken over (an elastic restart of the same run takes its own lock back this way). The host and
// pid in the file are for the message that names the holder.
#pragma once

#include <filesystem>
#include <string>

namespace trainer::core {

class RunLock {
 public:
  // The lock file's name inside a run folder.
  static constexpr const char* kFileName = "trainer.lock";

  // Takes the lock of `run_dir`. Throws core::InputError naming the folder and the live holder
  // (host and pid) when another process holds it.
  explicit RunLock(const std::filesystem::path& run_dir);
  ~RunLock();  // releases the lock and removes the file
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  // "host pid" of the run that held the lock before and died (empty when the file was new).
  const std::string& stale_holder() const { return stale_holder_; }

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  std::string stale_holder_;
};

}  // namespace trainer::core
