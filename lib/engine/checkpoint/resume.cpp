// See resume.h.
#include "engine/checkpoint/resume.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/config_loader.h"
#include "core/config_schema.h"
#include "core/error.h"
#include "core/file_checks.h"
#include "core/run_dir.h"
#include "model/weights_io.h"

namespace trainer::engine {
namespace {

// Resuming from a checkpoint older than the run's last.ckpt (e.g. weights/epoch2.ckpt) must not
// overwrite the later last.ckpt and results.csv rows: the resumed run then continues in a new
// folder beside it (<name>-from-epochN), starting with a copy of results.csv.
std::filesystem::path branch_if_older(const std::filesystem::path& run_dir, const Checkpoint& from,
                                      const core::TrainConfig& config, bool main_rank) {
  const auto last = run_dir / "weights" / "last.ckpt";
  std::error_code ec;
  if (!std::filesystem::exists(last) || std::filesystem::equivalent(last, config.run.resume, ec)) {
    return run_dir;
  }
  const Checkpoint latest = load_checkpoint(last);
  if (latest.epoch <= from.epoch) return run_dir;
  core::RunConfig branch = config.run;
  branch.project = run_dir.parent_path().string();
  branch.name = fmt::format("{}-from-epoch{}", run_dir.filename().string(), from.epoch + 1);
  branch.exist_ok = false;
  const auto dir = main_rank ? core::create_run_dir(branch) : core::choose_run_dir(branch);
  if (main_rank && std::filesystem::exists(run_dir / "results.csv")) {
    std::filesystem::copy_file(run_dir / "results.csv", dir / "results.csv",
                               std::filesystem::copy_options::overwrite_existing);
  }
  spdlog::warn(
      "{} is from epoch {}, but {} already reached epoch {}: continuing in {} so that nothing "
      "there is overwritten",
      config.run.resume, from.epoch + 1, last.string(), latest.epoch + 1, dir.string());
  return dir;
}

}  // namespace

// `resume=false` (the reference's default spelling) means a new run.
bool names_a_checkpoint(const std::string& resume) {
  return !resume.empty() && resume != "false" && resume != "False";
}

core::TrainConfig load_fit_config(const std::filesystem::path& file,
                                  const std::vector<std::string>& overrides,
                                  bool checkpoint_may_be_elsewhere) {
  std::string resume;
  for (const auto& o : overrides) {
    if (o.rfind("resume=", 0) == 0) resume = o.substr(7);
  }
  // A rank whose node lacks the checkpoint: the command line as given, resume= still naming it.
  const auto elsewhere = [&](const std::string& path) {
    return checkpoint_may_be_elsewhere && !std::filesystem::exists(path);
  };
  if (names_a_checkpoint(resume) && !elsewhere(resume)) {
    return resume_config(resume, overrides, file);
  }
  const auto loaded = core::load_config(file, overrides);
  for (const auto& note : loaded.notes) {
    spdlog::info("{}: {}", note.where.describe(), note.message);
  }
  // `resume: PATH` in the file: the same rules as resume= on the command line (the overrides that
  // may change apply, every other key of the file and the command line is compared).
  if (names_a_checkpoint(loaded.config.run.resume) && !elsewhere(loaded.config.run.resume)) {
    return resume_config(loaded.config.run.resume, overrides, file);
  }
  return loaded.config;
}

std::filesystem::path resume_checkpoint_path(const std::filesystem::path& resume) {
  // A folder, or a missing checkpoint, is named as such (a .pt is looked up beside, below).
  if (resume.extension() != ".pt" || std::filesystem::is_directory(resume)) {
    core::require_file(resume, "resume");
  }
  if (resume.extension() != ".pt") return resume;
  auto checkpoint = resume;
  checkpoint.replace_extension(".ckpt");
  if (!std::filesystem::is_regular_file(checkpoint)) {
    if (std::filesystem::is_regular_file(resume)) {
      if (const auto reference = model::reference_info_of(resume)) {
        throw core::InputError(fmt::format(
            "resume: {} is a checkpoint of the reference trainer (Ultralytics {}); trainer does "
            "not continue another trainer's optimizer and schedule. Start a new run from its "
            "weights instead: model={} (its architecture and weights) or pretrained={}",
            resume.string(), reference->version.empty() ? "?" : reference->version, resume.string(),
            resume.string()));
      }
    }
    throw core::InputError(fmt::format(
        "resume: {} holds weights only and no checkpoint {} is beside it; resume from a run's "
        "weights/last.ckpt, or fine-tune from the weights with model={}",
        resume.string(), checkpoint.string(), resume.string()));
  }
  spdlog::info("resume: {} holds weights only; resuming from the checkpoint beside it, {}",
               resume.string(), checkpoint.string());
  return checkpoint;
}

const std::vector<std::string>& changeable_on_resume() {
  // Not val / val_batches: they decide what fitness is (mAP of the validation set, or of part of
  // it, or -loss without validation), and best.ckpt and patience compare fitness across epochs.
  static const std::vector<std::string> keys = {"device",
                                                "workers",
                                                "plots",
                                                "tensorboard",
                                                "save_period",
                                                "patience",
                                                "cache",
                                                "cache_gb",
                                                "cache_dir",
                                                "cudnn_benchmark",
                                                "resume",
                                                "dist_backend",
                                                "dist_timeout",
                                                "decode_budget_gb",
                                                "dist_join_timeout",
                                                "dist_solo_timeout",
                                                "dist_find_unused"};
  return keys;
}

core::TrainConfig resume_config(const std::filesystem::path& resume,
                                const std::vector<std::string>& overrides,
                                const std::filesystem::path& file) {
  const std::filesystem::path checkpoint = resume_checkpoint_path(resume);
  return resume_config(load_checkpoint(checkpoint), checkpoint, overrides, file);
}

core::TrainConfig resume_config(const Checkpoint& ckpt, const std::filesystem::path& checkpoint,
                                const std::vector<std::string>& overrides,
                                const std::filesystem::path& file) {
  const auto& changeable = changeable_on_resume();
  const auto is_changeable = [&](const std::string& key) {
    return std::find(changeable.begin(), changeable.end(), key) != changeable.end();
  };
  std::vector<std::string> kept, others;
  for (const auto& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key == "resume") continue;
    (is_changeable(key) ? kept : others).push_back(o);
  }
  auto loaded =
      core::load_config_text(ckpt.config_yaml, checkpoint.string(), checkpoint.parent_path(), kept);
  // What the command line asks for: the config file it names (the original command line) or the
  // checkpoint's own config, with every other override. Only real changes are refused.
  const core::TrainConfig asked =
      file.empty() ? core::load_config_text(ckpt.config_yaml, checkpoint.string(),
                                            checkpoint.parent_path(), others)
                         .config
                   : core::load_config(file, others).config;
  // A key is asked for when an override names it or the file sets it away from the default: a
  // file holding little more than `resume: PATH` asks for nothing else, while the original
  // command line re-run with resume= asks for all of its values.
  const core::TrainConfig defaults = core::load_config({}, {}).config;
  std::vector<std::string> named;
  for (const auto& o : others) named.push_back(o.substr(0, o.find('=')));
  std::vector<std::string> changes;
  for (const auto& field : core::config_fields()) {
    if (field.alias || is_changeable(field.key)) continue;
    const auto before = field.get(loaded.config);
    const auto after = field.get(asked);
    if (before == after) continue;
    const bool in_overrides = std::find(named.begin(), named.end(), field.key) != named.end();
    if (!in_overrides && after == field.get(defaults)) continue;
    changes.push_back(
        fmt::format("{}: cannot be changed when resuming (the checkpoint has {}, the "
                    "command line asks for {})",
                    field.key, core::format_value(before), core::format_value(after)));
  }
  if (!changes.empty()) {
    throw core::ConfigError(fmt::format(
        "{}\na resumed run continues the checkpoint's config; changeable: {}; to train with other "
        "values start a new run (fine-tune from its weights with model={})",
        fmt::join(changes, "\n"), fmt::join(changeable.begin(), changeable.end() - 1, ", "),
        checkpoint.string()));
  }
  loaded.config.run.resume = std::filesystem::absolute(checkpoint).string();
  return loaded.config;
}

RunFolder open_run_folder(const core::TrainConfig& config, bool main_rank,
                          std::optional<Checkpoint> checkpoint,
                          const std::filesystem::path& restart_dir) {
  RunFolder folder;
  if (!restart_dir.empty()) {  // an elastic restart: the folder its first attempt opened
    if (main_rank) std::filesystem::create_directories(restart_dir);
    folder.dir = restart_dir;
    if (!config.run.resume.empty()) {
      folder.resume = checkpoint ? std::move(checkpoint) : load_checkpoint(config.run.resume);
    }
    return folder;
  }
  if (config.run.resume.empty()) {
    if (main_rank) folder.claim = core::ClaimedRunDir(config.run);
    folder.dir = main_rank ? folder.claim.path() : core::choose_run_dir(config.run);
    return folder;
  }
  folder.resume = checkpoint ? std::move(checkpoint) : load_checkpoint(config.run.resume);
  if (folder.resume->version < kOldestResumableCheckpointVersion) {
    throw core::InputError(fmt::format(
        "{}: written by an older trainer (checkpoint format {}) whose optimizer state uses "
        "another parameter-group order; it cannot be resumed. Its weights still load: start a "
        "new run from them or score them with trainer val weights={}",
        config.run.resume, folder.resume->version, config.run.resume));
  }
  if (!main_rank) return folder;  // the main rank's folder is the run's (fit broadcasts it)
  const auto weights = std::filesystem::absolute(config.run.resume).parent_path();
  const auto run_dir = weights.parent_path();
  if (weights.filename() != "weights" || !core::is_run_folder(run_dir)) {
    // A checkpoint copied out of its run (~/dl/last.ckpt): nothing beside it is a run's, so
    // nothing there is written or removed; the run continues in a new folder of its own config's
    // project and name.
    core::RunConfig fresh = config.run;
    fresh.exist_ok = false;  // a folder of its own: never another run's rows to mix with
    folder.claim = core::ClaimedRunDir(fresh);
    folder.dir = folder.claim.path();
    spdlog::warn(
        "{} is not inside a run folder (no args.yaml beside a weights/ folder holding it): "
        "resuming in a new run folder, {}",
        config.run.resume, folder.dir.string());
    return folder;
  }
  folder.dir = branch_if_older(run_dir, *folder.resume, config, main_rank);
  return folder;
}

}  // namespace trainer::engine
