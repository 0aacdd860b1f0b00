// Preparing a resume: the checkpoint a path names, the config a resumed run continues with (what
// may change, what may not), and the folder it writes to.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/config_writer.h"
#include "core/error.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/resume.h"
#include "engine/checkpoint/run_config_fixture.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::test;
namespace fs = std::filesystem;

namespace {

// A run folder (args.yaml, weights/) with a checkpoint of `epoch` saved as weights/`file`.
fs::path save_run_checkpoint(const fs::path& run_dir, const core::TrainConfig& config,
                             int64_t epoch, const std::string& file) {
  fs::create_directories(run_dir / "weights");
  core::write_config_yaml(config, run_dir / "args.yaml");
  engine::Checkpoint ckpt;
  ckpt.config_yaml = core::config_to_yaml(config);
  ckpt.epoch = epoch;
  ckpt.best_epoch = epoch;
  engine::save_checkpoint(ckpt, run_dir / "weights" / file);
  return run_dir / "weights" / file;
}

}  // namespace

TEST_CASE("resume: a .ckpt names itself, a run's .pt the checkpoint beside it, a lone .pt fails") {
  TempDir dir;
  const auto last = save_run_checkpoint(dir / "run", small_run_config(dir.path()), 1, "last.ckpt");
  CHECK(engine::resume_checkpoint_path(last) == last);
  write_text(dir / "run" / "weights" / "last.pt", "weights");
  CHECK(engine::resume_checkpoint_path(dir / "run" / "weights" / "last.pt") == last);
  CHECK_THROWS_WITH_AS(engine::resume_checkpoint_path(dir / "lone.pt"),  // no .ckpt beside it
                       doctest::Contains("holds weights only"), core::InputError);
}

TEST_CASE("resume: the checkpoint's config with the changeable keys applied, others refused") {
  TempDir dir;
  const core::TrainConfig original = small_run_config(dir.path());
  const auto last = save_run_checkpoint(dir / "run", original, 1, "last.ckpt");
  const auto& changeable = engine::changeable_on_resume();
  CHECK(std::find(changeable.begin(), changeable.end(), "workers") != changeable.end());
  CHECK(std::find(changeable.begin(), changeable.end(), "val") == changeable.end());

  const core::TrainConfig resumed = engine::resume_config(last, {"workers=7"});
  CHECK(resumed.data.workers == 7);  // changeable: applied
  CHECK(resumed.optim.lr0 == 0.02);  // the checkpoint's own
  CHECK(resumed.schedule.epochs == 5);
  CHECK(resumed.run.resume == fs::absolute(last).string());
  // The same value as the checkpoint's is no change; another value of a fixed key is an error
  // naming the key and both values.
  CHECK_NOTHROW(engine::resume_config(last, {"lr0=0.02"}));
  CHECK_THROWS_WITH_AS(engine::resume_config(last, {"lr0=0.5"}),
                       doctest::Contains("lr0: cannot be changed when resuming (the checkpoint "
                                         "has 0.02, the command line asks for 0.5)"),
                       core::ConfigError);
  // load_fit_config routes resume= there.
  const core::TrainConfig via_cli = engine::load_fit_config({}, {"resume=" + last.string()});
  CHECK(via_cli.optim.lr0 == 0.02);
  CHECK(via_cli.run.resume == fs::absolute(last).string());
}

TEST_CASE("resume: the run's own folder, a branch for an older checkpoint, a new one outside") {
  TempDir dir;
  const core::TrainConfig original = small_run_config(dir.path());
  const auto last = save_run_checkpoint(dir / "run", original, 2, "last.ckpt");
  const auto older = save_run_checkpoint(dir / "run", original, 0, "epoch1.ckpt");
  write_text(dir / "run" / "results.csv", "epoch\n1\n2\n3\n");

  core::TrainConfig config = engine::resume_config(last, {});
  engine::RunFolder folder = engine::open_run_folder(config, /*main_rank=*/true);
  CHECK(folder.dir == fs::absolute(dir / "run"));
  REQUIRE(folder.resume.has_value());
  CHECK(folder.resume->epoch == 2);

  // epoch1.ckpt is older than last.ckpt: a new folder run-from-epoch1 with results.csv copied.
  config = engine::resume_config(older, {});
  folder = engine::open_run_folder(config, true);
  CHECK(folder.dir.filename() == "run-from-epoch1");
  CHECK(read_text(folder.dir / "results.csv") == "epoch\n1\n2\n3\n");
  CHECK(folder.resume->epoch == 0);

  // A checkpoint copied out of its run: a new folder of its config's project/name, nothing
  // written beside it.
  fs::create_directories(dir / "downloads");
  fs::copy_file(last, dir / "downloads" / "last.ckpt");
  config = engine::resume_config(dir / "downloads" / "last.ckpt", {});
  folder = engine::open_run_folder(config, true);
  CHECK(folder.dir.parent_path() == fs::path(original.run.project));
  CHECK(folder.dir.filename().string().rfind("run", 0) == 0);
  CHECK(folder.dir != fs::absolute(dir / "run"));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "downloads")) ++entries;
  CHECK(entries == 1);
}
