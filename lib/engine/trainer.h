// `trainer fit`: the training loop, from config to run folder.
//
// Why: this is the product. The loop below reads like the data flow in design.md: loader ->
// step (schedule, forward+loss, backward, clip, optimizer, EMA) -> epoch end (loss schedule,
// validation on an EMA copy, results, checkpoint). Every piece it calls lives in lib/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "distributed/group.h"
#include "engine/checkpoint/resume.h"  // load_fit_config, resume_config: the configs fit() takes
#include "engine/device/ranks.h"
#include "engine/fit_hooks.h"
#include "engine/validator.h"

namespace trainer::engine {

struct FitOptions {
  bool interactive = false;  // redraw the progress line in place (a terminal)
  bool per_class = false;    // print the per-class table after the last validation
  // Data-parallel (torchrun or device=0,1,...): the ranks' group and this rank's place on its
  // machine (which picks its device from a device list); a single process is rank 0 of 1.
  Ranks ranks;
  // How this process starts (agree_fit_start, engine/checkpoint/fit_start.h): the resume's
  // checkpoint as the ranks agreed on it (else fit reads config.run.resume, agreeing under a
  // group), and for an elastic restart the job's run folder and run id.
  std::optional<Checkpoint> resume_checkpoint;
  std::filesystem::path restart_dir;
  std::string run_id;
  // The job's records under torchrun's agent (null elsewhere): rank 0 leaves the run folder and
  // each committed epoch there for a restarted attempt.
  std::shared_ptr<distributed::JobRecords> records;
  // Fault injection and observation for the tests (engine/fit_hooks.h); empty in a real run.
  FitHooks hooks;
};

struct FitResult {
  std::filesystem::path run_dir;
  int64_t epochs_completed = 0;
  double best_fitness = 0.0;
  int64_t best_epoch = -1;  // 0-based
  bool early_stopped = false;
  std::optional<ValidationResult> last_validation;
  double seconds = 0.0;
};

// Trains `config` (a resume when config.run.resume names a checkpoint: engine/checkpoint/resume.h
// prepares such a config from what the user typed). Data-parallel ranks all call fit() with the
// same config and their group: every rank validates its share of the val batches, rank 0 logs
// and writes the run folder; decisions to stop are agreed.
FitResult fit(const core::TrainConfig& config, const FitOptions& options = {});

}  // namespace trainer::engine
