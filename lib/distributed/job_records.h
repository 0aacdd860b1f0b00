// The job's records: a few keys that outlive a restart of its workers.
//
// Why: torchrun's elastic agent restarts the workers after a failure with the same command line,
// and keeps its store across those attempts. The job's first attempt leaves there what a later
// attempt must find (the run folder, the last committed epoch: engine/checkpoint/fit_start.h),
// also when a restart leaves a single worker, which joins no process group.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/dist_env.h"

namespace trainer::distributed {

class JobRecords {
 public:
  // Under torchrun's agent store (TORCHELASTIC_USE_AGENT_STORE=True, MASTER_ADDR:MASTER_PORT):
  // a client of it; nullptr elsewhere (no agent: nothing outlives this process). Throws
  // CommError when the store does not answer within `timeout`.
  static std::shared_ptr<JobRecords> connect(const core::DistEnv& env,
                                             std::chrono::milliseconds timeout);
  ~JobRecords();
  JobRecords(const JobRecords&) = delete;
  JobRecords& operator=(const JobRecords&) = delete;

  // This start of the workers (TORCHELASTIC_RESTART_COUNT; 0: the first).
  int attempt() const;
  // Keys live under trainer/job/<TORCHELASTIC_RUN_ID>/, outside every attempt's own keys.
  // Reading does not wait: nullopt when nobody wrote `key`. A store that does not answer is a
  // CommError.
  std::optional<std::string> get(const std::string& key);
  void set(const std::string& key, const std::string& value);

  struct Impl;
  explicit JobRecords(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainer::distributed
