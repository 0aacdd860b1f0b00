// Preparing a resumed run: the config it continues with and the folder it writes to.
//
// Why: resuming used to be split between the app (which parsed `resume=` from the overrides) and
// the engine. Both steps live here: load_fit_config() turns what the user typed into the config to
// fit (a new run's, or a checkpoint's own with the few changeable keys applied), and
// open_run_folder() finds the folder and the checkpoint fit() continues from.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/run_dir.h"
#include "engine/checkpoint/checkpoint.h"

namespace trainer::engine {

// The config `trainer fit CONFIG key=value...` trains: `file` (may be empty) with `overrides`, or,
// when `resume=PATH` is given (on the command line or in the file), the checkpoint's own config
// through resume_config(). Logs the loader's notes. Throws core::ConfigError / core::InputError.
// `checkpoint_may_be_elsewhere` (a rank of a group): when the checkpoint resume= names is not on
// this node, the config is the command line's with resume= still naming it; the ranks then agree
// on it (agree_fit_start) and the holder sends it.
core::TrainConfig load_fit_config(const std::filesystem::path& file,
                                  const std::vector<std::string>& overrides,
                                  bool checkpoint_may_be_elsewhere = false);

// Whether `resume` names a checkpoint (empty and the reference's `false` mean a new run).
bool names_a_checkpoint(const std::string& resume);

// The checkpoint `resume` names: itself, or for a run's exported weights (weights/last.pt) the
// .ckpt beside it, logging so. Throws core::InputError for a .pt without one.
std::filesystem::path resume_checkpoint_path(const std::filesystem::path& resume);

// The keys a resumed run may change (the run's environment, not what it trains): device, workers,
// plots, tensorboard, save_period, patience, cache, cache_gb, cache_dir, cudnn_benchmark, resume,
// dist_backend, dist_timeout, dist_join_timeout, dist_solo_timeout, dist_find_unused,
// decode_budget_gb. Not val or val_batches: they set the scale of fitness.
const std::vector<std::string>& changeable_on_resume();

// The config of a resumed run (`checkpoint` may be a .pt, see resume_checkpoint_path): the
// checkpoint's own, with the changeable `overrides` applied. Every other key the command line
// gives (the config `file` when not empty, i.e. the original command line re-run with resume=,
// and the other overrides) must equal the checkpoint's value: a real change is an error naming
// the key, the checkpoint's value and the new one. A key counts as given when an override names
// it or the file sets it to other than its default (a file with just `resume: PATH` gives no
// other key). `resume` is set to `checkpoint`.
core::TrainConfig resume_config(const std::filesystem::path& checkpoint,
                                const std::vector<std::string>& overrides,
                                const std::filesystem::path& file = {});
// The same for a checkpoint already read (or received from another rank) from `checkpoint`.
core::TrainConfig resume_config(const Checkpoint& ckpt, const std::filesystem::path& checkpoint,
                                const std::vector<std::string>& overrides,
                                const std::filesystem::path& file = {});

// Where a run writes, and the checkpoint it continues from (none for a new run).
struct RunFolder {
  std::filesystem::path dir;
  std::optional<Checkpoint> resume;
  core::ClaimedRunDir claim;  // a new folder this rank made: given back unless the run keeps it
};

// A new run's folder (created on the main rank), or for `config.run.resume` its checkpoint,
// checked to be resumable, and its run's folder: runs/x/weights/last.ckpt -> runs/x, or a new
// folder <run>-from-epochN beside it when the checkpoint is older than the run's last.ckpt (so
// nothing of the run is overwritten; results.csv is copied there). A checkpoint that is not in a
// run folder's weights/ (core::is_run_folder) resumes in a new folder of its config's
// project/name, logged: nothing beside the checkpoint is written.
// `checkpoint`: the resume's, already read or received (else read from config.run.resume).
// `restart_dir` (an elastic restart): the folder the job's first attempt opened, used as it is.
// Only the main rank's folder counts: the others take its name (FitRun broadcasts it).
RunFolder open_run_folder(const core::TrainConfig& config, bool main_rank,
                          std::optional<Checkpoint> checkpoint = std::nullopt,
                          const std::filesystem::path& restart_dir = {});

}  // namespace trainer::engine
