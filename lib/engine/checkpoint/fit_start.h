// How a `trainer fit` process starts: a new run, a resume, or an elastic restart of its job.
//
// Why: under torchrun --max-restarts the agent starts the workers again after a rank dies, with
// the same command line. Without help they would open a new run folder and train from scratch.
// The job's first attempt records its run folder in the agent's store (which outlives the
// workers: distributed::Group::job_record); a later attempt finds it there, and its ranks agree on
// the newest checkpoint of that run any of them can read (checkpoint_exchange.h), so the job
// continues from its last complete epoch in the same folder. The same agreement serves a plain
// resume on nodes that do not share a file system.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "engine/checkpoint/checkpoint.h"

namespace trainer::distributed {
class Group;
class JobRecords;
}  // namespace trainer::distributed

namespace trainer::engine {

// The job records (Group::job_record) a run leaves for a restarted attempt.
inline constexpr const char* kRunRecord = "run";              // "<run id>\n<run folder>"
inline constexpr const char* kCommittedRecord = "committed";  // "<epoch>\n<host:path>"

std::string run_record(const std::string& run_id, const std::filesystem::path& run_dir);
std::string committed_record(int64_t epoch, const std::string& where);

struct FitStart {
  core::TrainConfig config;
  std::optional<Checkpoint> checkpoint;  // the resume's, as the ranks agreed on it
  std::filesystem::path restart_dir;     // an elastic restart: its job's run folder
  std::string run_id;                    // an elastic restart: its job's run
  int attempt = 0;                       // TORCHELASTIC_RESTART_COUNT
};

// Every rank of `group` (null: a single process) with the config load_fit_config gave it
// (checkpoint_may_be_elsewhere: resume= may name a file this node lacks), the command line it came
// from, and the job's records (null outside torchrun's agent: `config` is then a new run or a
// resume agreed over `group`). On a restart (attempt > 0) whose job recorded a run: that
// run's newest checkpoint any rank holds, logged "restart K: resuming RUN from epoch E"; when no
// rank holds one, a run that committed no epoch starts again as the first attempt did (in the
// same folder), and one that did stops with an error naming where its checkpoint was. Otherwise a
// resume's checkpoint is agreed the same way (an error names what each rank had when none can
// read it). Throws core::InputError / core::ConfigError.
FitStart agree_fit_start(distributed::Group* group, distributed::JobRecords* records,
                         const core::TrainConfig& config, const std::filesystem::path& file,
                         const std::vector<std::string>& overrides);

// The checkpoint at `path` (a resume's) from whichever rank of `group` holds the newest
// (checkpoint_exchange.h); throws core::InputError naming every rank's file when none can read it.
Checkpoint agree_on_resume_checkpoint(distributed::Group* group, const std::filesystem::path& path);

// A fresh run id: 16 hex digits from the system's random device.
std::string new_run_id();

}  // namespace trainer::engine
