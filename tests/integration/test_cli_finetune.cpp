// Fine-tuning through the CLI: weights trained on the synthetic shapes seed a model for a dataset
// with more classes (model=RUN/weights/last.pt), transferring all but the class layers; the first
// epoch's training loss is then lower than from scratch (mean of two seeds). resume= on a .pt
// continues from the .ckpt beside it.
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
  const auto names_at = yaml.find("names:\n");
  REQUIRE(names_at != std::string::npos);
  int nc = 0;
  for (size_t at = yaml.find("\n  ", names_at); at != std::string::npos;
       at = yaml.find("\n  ", at + 1)) {
    ++nc;
  }
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
    CHECK(transferred < total);           // the class layers differ (nc + 2 classes)
    CHECK(transferred > total * 9 / 10);  // everything else came over
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
