// Fine-tuning through the CLI: weights trained on the synthetic shapes seed a model for a dataset
// with more classes (model=RUN/weights/last.pt), transferring everything, the class rows of the
// shared names by name; the first epoch's training loss is then lower than from scratch (mean of
// two seeds). resume= on a .pt continues from the .ckpt beside it. Weights whose class branch is
// wider than the new dataset's default rebuild it at their width, recorded as cls_width, which
// resume, val and predict then build.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "test_support.h"

using trainer::test::run_command;

namespace {

std::string trainer_binary() {
  return TRAINER_BINARY;
}

// The sum of the train/*_loss columns of results.csv's first epoch.
double first_epoch_train_loss(const std::filesystem::path& csv_file) {
  std::istringstream csv(trainer::test::read_text(csv_file));
  std::string header;
  std::string row;
  std::getline(csv, header);
  std::getline(csv, row);
  std::istringstream names(header);
  std::istringstream values(row);
  std::string name;
  std::string value;
  double sum = 0;
  while (std::getline(names, name, ',') && std::getline(values, value, ',')) {
    if (name.rfind("train/", 0) == 0 && name.find("_loss") != std::string::npos) {
      sum += std::stod(value);
    }
  }
  return sum;
}

// The classes a synth dataset yaml names (its `names:` block closes the file, one "  i: name" line
// each).
int class_count(const std::string& yaml) {
  const auto names_at = yaml.find("names:\n");
  REQUIRE(names_at != std::string::npos);
  int nc = 0;
  for (size_t at = yaml.find("\n  ", names_at); at != std::string::npos;
       at = yaml.find("\n  ", at + 1)) {
    ++nc;
  }
  return nc;
}

}  // namespace

TEST_CASE("cli: fine-tuning weights on a dataset with more classes transfers and learns faster") {
  trainer::test::TempDir dir;
  std::string out;
  const auto data = dir.path() / "shapes";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() +
                          " --train 16 --val 4 --size 96 --max-objects 2",
                      &out) == 0);
  // The same images under more class names: another nc.
  std::string yaml = trainer::test::read_text(data / "synthetic.yaml");
  const int nc = class_count(yaml);
  yaml += "  " + std::to_string(nc) + ": extra_a\n  " + std::to_string(nc + 1) + ": extra_b\n";
  const auto more = data / "more.yaml";
  trainer::test::write_text(more, yaml);
  const std::string common =
      " model=yolo26t imgsz=96 batch=4 nbs=4 workers=1 precision=fp32 device=cpu plots=false "
      "val_batches=1 project=" +
      dir.path().string();
  // Enough pretraining for the box branch to have learned something (12 s here).
  REQUIRE(run_command(trainer_binary() + " fit" + common +
                          " data=" + (data / "synthetic.yaml").string() +
                          " epochs=40 optimizer=AdamW lr0=0.005 warmup_epochs=1 seed=3 name=pre",
                      &out) == 0);
  const auto weights = dir.path() / "pre" / "weights" / "last.pt";
  REQUIRE(std::filesystem::exists(weights));

  // The first epoch's training loss, from scratch and fine-tuned, at two seeds (one epoch of 4
  // batches is noisy; fp32 on the CPU is deterministic, so these runs repeat exactly).
  const std::string tune = common + " data=" + more.string() + " epochs=1 warmup_epochs=0";
  double scratch = 0, tuned = 0;
  for (const std::string seed : {"3", "4"}) {
    REQUIRE(run_command(trainer_binary() + " fit" + tune + " seed=" + seed + " name=scratch" + seed,
                        &out) == 0);
    CHECK(out.find("Transferred") == std::string::npos);
    REQUIRE(run_command(trainer_binary() + " fit" + tune + " seed=" + seed + " name=tuned" + seed +
                            " model=" + weights.string(),
                        &out) == 0);
    CAPTURE(out);
    CHECK(out.find("model: yolo26t from " + weights.string()) != std::string::npos);
    std::smatch m;
    REQUIRE(std::regex_search(
        out, m, std::regex(R"(Transferred (\d+)/(\d+) items from pretrained weights)")));
    const int transferred = std::stoi(m[1]);
    const int total = std::stoi(m[2]);
    // nc + 2 classes: the class convs' rows of the nc shared names are remapped by name (they
    // count as transferred, as the reference counts them), the 2 new rows stay initialised.
    CHECK(transferred == total);
    CHECK(out.find("Remapped " + std::to_string(nc) + "/" + std::to_string(nc + 2) +
                   " cls head rows") != std::string::npos);
    scratch += first_epoch_train_loss(dir.path() / ("scratch" + seed) / "results.csv") / 2;
    tuned += first_epoch_train_loss(dir.path() / ("tuned" + seed) / "results.csv") / 2;
  }
  CAPTURE(scratch);
  CAPTURE(tuned);
  CHECK(tuned < scratch);  // measured: 7.43 against 7.88

  REQUIRE(run_command(trainer_binary() + " fit" + tune +
                          " seed=3 name=frozen freeze=2 model=" + weights.string(),
                      &out) == 0);
  CHECK(out.find("freeze: layers [0, 1]") != std::string::npos);

  // resume= names the exported weights: the checkpoint beside them is used (and says so).
  run_command(
      trainer_binary() + " fit resume=" + (dir.path() / "frozen" / "weights" / "last.pt").string(),
      &out);
  CHECK(out.find("resuming from the checkpoint beside it") != std::string::npos);
}

TEST_CASE(
    "cli: weights with a wider class branch rebuild it, and resume, val and predict build it") {
  trainer::test::TempDir dir;
  std::string out;
  const auto data = dir.path() / "shapes";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() +
                          " --train 8 --val 4 --size 64 --max-objects 2",
                      &out) == 0);
  // The same images under 20 class names: the tiny model's class branch is max(16, 20) wide.
  std::string yaml = trainer::test::read_text(data / "synthetic.yaml");
  const int nc = class_count(yaml);
  REQUIRE(nc < 16);
  for (int i = nc; i < 20; ++i)
    yaml += "  " + std::to_string(i) + ": extra_" + std::to_string(i) + "\n";
  const auto wide = data / "wide.yaml";
  trainer::test::write_text(wide, yaml);
  const std::string common =
      " model=yolo26t imgsz=64 batch=4 nbs=4 workers=1 precision=fp32 device=cpu plots=false "
      "val_batches=1 project=" +
      dir.path().string();
  REQUIRE(run_command(
              trainer_binary() + " fit" + common + " data=" + wide.string() + " epochs=1 name=wide",
              &out) == 0);
  const auto source = dir.path() / "wide" / "weights" / "last.pt";

  // Killed after its first epoch's checkpoint (test hook), then resumed.
  const std::string tune = trainer_binary() + " fit" + common +
                           " data=" + (data / "synthetic.yaml").string() +
                           " epochs=2 name=tuned pretrained=" + source.string();
  CHECK(run_command("env TRAINER_TEST_HOOKS=1 TRAINER_FAULT_EXIT_AFTER=last.ckpt:1 " + tune,
                    &out) == 137);
  CAPTURE(out);
  CHECK(out.find("class branches rebuilt at the hidden width of " + source.string()) !=
        std::string::npos);
  CHECK(out.find("recorded as cls_width: 20") != std::string::npos);
  CHECK(out.find("Remapped " + std::to_string(nc) + "/" + std::to_string(nc) + " cls head rows") !=
        std::string::npos);
  const auto run = dir.path() / "tuned";
  CHECK(trainer::test::read_text(run / "args.yaml").find("cls_width: 20") != std::string::npos);
  REQUIRE(run_command(trainer_binary() + " fit resume=" + (run / "weights" / "last.ckpt").string(),
                      &out) == 0);
  CHECK(out.find("Transferred") == std::string::npos);  // the checkpoint's weights, at width 20

  const auto weights = run / "weights" / "best.pt";
  REQUIRE(run_command(trainer_binary() + " val data=" + (data / "synthetic.yaml").string() +
                          " model=yolo26t weights=" + weights.string() +
                          " imgsz=64 device=cpu workers=1 plots=false project=" +
                          dir.path().string() + " name=val",
                      &out) == 0);
  REQUIRE(run_command(trainer_binary() + " predict weights=" + weights.string() +
                          " source=" + (data / "images" / "val").string() +
                          " imgsz=64 device=cpu project=" + dir.path().string(),
                      &out) == 0);
}
