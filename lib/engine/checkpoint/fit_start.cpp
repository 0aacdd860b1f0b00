// See fit_start.h.
// Tested by tests/engine/checkpoint/test_checkpoint_exchange.cpp: agree_fit_start: resume file on
//   rank 0 only, restart resumes recorded run, no-epoch restart, unreadable committed epoch error,
//   single worker.
#include "engine/checkpoint/fit_start.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <random>
#include <sstream>

#include "core/error.h"
#include "distributed/group.h"
#include "distributed/job_records.h"
#include "engine/checkpoint/checkpoint_exchange.h"
#include "engine/checkpoint/resume.h"

namespace trainer::engine {
namespace {

// The checkpoint a resume= path stands for (a run's weights/last.pt: the .ckpt beside it).
std::filesystem::path checkpoint_of(const std::string& resume) {
  std::filesystem::path p(resume);
  if (p.extension() == ".pt") p.replace_extension(".ckpt");
  return p;
}

// The resume's checkpoint and the config it continues with.
FitStart agree_on_resume(distributed::Group& group, FitStart start,
                         const std::filesystem::path& file,
                         const std::vector<std::string>& overrides) {
  const auto path = checkpoint_of(start.config.run.resume);
  start.checkpoint = agree_on_resume_checkpoint(&group, path);
  start.config = resume_config(*start.checkpoint, path, overrides, file);
  return start;
}

}  // namespace

Checkpoint agree_on_resume_checkpoint(distributed::Group* group,
                                      const std::filesystem::path& path) {
  AgreedCheckpoint agreed = agree_on_checkpoint(group, path, {});
  if (!agreed.checkpoint) {
    throw core::InputError(fmt::format("resume: no rank can read the checkpoint {} ({})",
                                       path.string(), agreed.describe_offers()));
  }
  return std::move(*agreed.checkpoint);
}

std::string run_record(const std::string& run_id, const std::filesystem::path& run_dir) {
  return run_id + "\n" + run_dir.string();
}

std::string committed_record(int64_t epoch, const std::string& where) {
  return fmt::format("{}\n{}", epoch, where);
}

std::string new_run_id() {
  std::random_device device;
  std::uniform_int_distribution<uint64_t> bits;
  return fmt::format("{:016x}", bits(device));
}

FitStart agree_fit_start(distributed::Group* group, distributed::JobRecords* records,
                         const core::TrainConfig& config, const std::filesystem::path& file,
                         const std::vector<std::string>& overrides) {
  FitStart start;
  start.config = config;
  const bool main_rank = group == nullptr || group->rank() == 0;
  const bool resume = names_a_checkpoint(config.run.resume);
  start.attempt = records ? records->attempt() : 0;
  if (start.attempt == 0) {
    return resume && group ? agree_on_resume(*group, std::move(start), file, overrides) : start;
  }
  const auto record = records->get(kRunRecord);
  if (!record) {
    if (main_rank) {
      spdlog::warn(
          "restart {}: the first attempt stopped before opening its run folder; "
          "starting as it did",
          start.attempt);
    }
    return resume && group ? agree_on_resume(*group, std::move(start), file, overrides) : start;
  }
  const auto newline = record->find('\n');
  start.run_id = record->substr(0, newline);
  start.restart_dir = record->substr(newline + 1);
  const auto last = start.restart_dir / "weights" / "last.ckpt";
  AgreedCheckpoint agreed = agree_on_checkpoint(group, last, {start.run_id, -1});
  if (agreed.checkpoint) {
    if (main_rank) {
      spdlog::info("restart {}: resuming {} from epoch {} (checkpoint {} of rank {})",
                   start.attempt, start.restart_dir.string(), agreed.checkpoint->epoch + 2,
                   agreed.where, agreed.holder);
    }
    start.config = resume_config(*agreed.checkpoint, last, overrides, file);
    start.checkpoint = std::move(agreed.checkpoint);
    return start;
  }
  if (const auto committed = records->get(kCommittedRecord)) {
    std::istringstream in(*committed);
    int64_t epoch = -1;
    std::string where;
    in >> epoch;
    std::getline(in >> std::ws, where);
    throw core::InputError(fmt::format(
        "restart {}: {} completed epoch {} (its checkpoint was written to {}), but no rank can "
        "read a checkpoint of this run now ({}); starting over would lose those epochs. Bring "
        "that node or file back and resume with resume=<run>/weights/last.ckpt",
        start.attempt, start.restart_dir.string(), epoch + 1, where, agreed.describe_offers()));
  }
  if (main_rank) {
    spdlog::info("restart {}: {} completed no epoch before the failure; starting it again there",
                 start.attempt, start.restart_dir.string());
  }
  return resume && group ? agree_on_resume(*group, std::move(start), file, overrides) : start;
}

}  // namespace trainer::engine
