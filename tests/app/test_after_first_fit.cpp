// The everyday workflows after a first fit, through the binary: val and predict of the run's
// weights with nothing but the weights (the run's dataset and image size come from its record),
// model= and weights= taking the same paths, a fine-tuned run that still works once the weights
// it started from are deleted, and `precision: auto` deciding alike for identical commands.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace fs = std::filesystem;
using trainer::test::run_command;
using trainer::test::TempDir;

namespace {

const std::string kTrainer = TRAINER_BINARY;

// The metric table of `trainer val` (its rows from "Class" on, without the timing lines).
std::string val_table(const std::string& out) {
  const size_t begin = out.find("Class");
  const size_t end = out.find("Speed:");
  return begin == std::string::npos ? "" : out.substr(begin, end - begin);
}

int run_in(const fs::path& dir, const std::string& args, std::string* out) {
  return run_command("cd " + dir.string() + " && " + kTrainer + " " + args, out);
}

}  // namespace

TEST_CASE("after a fit: val and predict need only the weights, model= and weights= alike") {
  TempDir dir;
  std::string out;
  REQUIRE(run_in(dir.path(), "synth shapes --train 4 --val 2 --size 64 --seed 3", &out) == 0);
  REQUIRE_MESSAGE(run_in(dir.path(),
                         "fit data=shapes/synthetic.yaml epochs=1 imgsz=64 batch=2 workers=0 "
                         "val=false project=runs name=first -q",
                         &out) == 0,
                  out);
  const fs::path weights = dir / "runs/first/weights/best.pt";
  const fs::path elsewhere = dir / "elsewhere";
  fs::create_directories(elsewhere);

  // No data=, no imgsz=: the run's, said in one line.
  REQUIRE_MESSAGE(run_in(elsewhere, "val weights=" + weights.string(), &out) == 0, out);
  CHECK(out.find("from " + (dir / "runs/first/args.yaml").string() + ": data=" +
                 (dir / "shapes/synthetic.yaml").string() + " imgsz=64") != std::string::npos);
  const std::string table = val_table(out);
  CHECK_FALSE(table.empty());
  // model= takes the same path.
  REQUIRE(run_in(elsewhere, "val model=" + weights.string(), &out) == 0);
  CHECK(val_table(out) == table);
  // Weights without their run (copied out of it) name no dataset: a usage error says what to give.
  fs::copy_file(weights, elsewhere / "lone.pt");
  CHECK(run_in(elsewhere, "val weights=lone.pt", &out) == 2);
  CHECK(out.find("error: trainer val needs a dataset") == 0);
  // Given on the command line, it wins.
  REQUIRE(run_in(elsewhere, "val weights=" + weights.string() + " imgsz=96", &out) == 0);
  CHECK(out.find("imgsz=64") == std::string::npos);
  CHECK(out.find(": data=" + (dir / "shapes/synthetic.yaml").string() + "\n") != std::string::npos);

  // predict: imgsz from the run, model= as weights=.
  const std::string source = " source=" + (dir / "shapes/images/val").string();
  REQUIRE_MESSAGE(run_in(elsewhere,
                         "predict weights=" + weights.string() + source +
                             " save=false save_txt=true conf=0.001 name=a",
                         &out) == 0,
                  out);
  CHECK(out.find("imgsz 64 (from " + (dir / "runs/first/args.yaml").string() + ")") !=
        std::string::npos);
  CHECK(out.find("at shape (1, 3, 64, 64)") != std::string::npos);
  REQUIRE_MESSAGE(run_in(elsewhere,
                         "predict model=" + weights.string() + source +
                             " save=false save_txt=true conf=0.001 name=b",
                         &out) == 0,
                  out);
  for (const char* label : {"000004.txt", "000005.txt"}) {
    CAPTURE(label);
    const fs::path a = elsewhere / "runs/detect/a/labels" / label;
    const fs::path b = elsewhere / "runs/detect/b/labels" / label;
    REQUIRE(fs::exists(a));  // conf=0.001: an untrained model still finds something
    CHECK(trainer::test::read_text(a) == trainer::test::read_text(b));
  }
}

TEST_CASE(
    "after a fit: a fine-tuned run's weights work once the weights it started from are gone") {
  TempDir dir;
  std::string out;
  REQUIRE(run_in(dir.path(), "synth shapes --train 4 --val 2 --size 64 --seed 4", &out) == 0);
  const std::string fit =
      "fit data=shapes/synthetic.yaml epochs=1 imgsz=64 batch=2 workers=0 val=false project=runs";
  REQUIRE_MESSAGE(run_in(dir.path(), fit + " model=yolo26t name=base -q", &out) == 0, out);
  REQUIRE_MESSAGE(
      run_in(dir.path(), fit + " model=runs/base/weights/best.pt name=tuned -q", &out) == 0, out);
  CHECK(trainer::test::read_text(dir / "runs/tuned/args.yaml").find("architecture: yolo26t") !=
        std::string::npos);
  const fs::path tuned = dir / "runs/tuned/weights";
  std::string before_val, before_ckpt;
  REQUIRE_MESSAGE(run_in(dir.path(), "val weights=" + (tuned / "best.pt").string(), &out) == 0,
                  out);
  before_val = val_table(out);
  REQUIRE(run_in(dir.path(), "val weights=" + (tuned / "last.ckpt").string(), &out) == 0);
  before_ckpt = val_table(out);

  fs::remove_all(dir / "runs/base");  // the weights the fine-tune started from
  for (const std::string file : {"best.pt", "last.ckpt"}) {
    CAPTURE(file);
    for (const std::string key : {"weights=", "model="}) {
      CAPTURE(key);
      REQUIRE_MESSAGE(run_in(dir.path(), "val " + key + (tuned / file).string(), &out) == 0, out);
      CHECK(val_table(out) == (file == "best.pt" ? before_val : before_ckpt));
    }
  }
  REQUIRE_MESSAGE(run_in(dir.path(),
                         "predict weights=" + (tuned / "best.pt").string() +
                             " source=shapes/images/val save=false",
                         &out) == 0,
                  out);
}

namespace {

// results.csv without its `time` column (wall-clock seconds, the one cell two identical runs may
// not share).
std::string results_without_time(const fs::path& csv) {
  std::istringstream in(trainer::test::read_text(csv));
  std::string line, kept;
  long time_column = -1;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (time_column < 0) {
      const auto it = std::find(cells.begin(), cells.end(), "time");
      time_column = it == cells.end() ? static_cast<long>(cells.size()) : it - cells.begin();
    }
    if (time_column < static_cast<long>(cells.size())) cells.erase(cells.begin() + time_column);
    for (const auto& cell : cells) kept += cell + ",";
    kept += "\n";
  }
  return kept;
}

// The line of `log` that says what precision: auto decided, without its timestamp.
std::string precision_line(const fs::path& log) {
  const std::string text = trainer::test::read_text(log);
  const size_t at = text.find("precision: auto -> ");
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

}  // namespace

TEST_CASE("precision: auto decides from the hardware, so two identical fits give equal results") {
  TempDir dir;
  std::string out;
  REQUIRE(run_in(dir.path(), "synth shapes --train 4 --val 2 --size 64 --seed 5", &out) == 0);
  const std::string fit =
      "fit data=shapes/synthetic.yaml model=yolo26t epochs=2 imgsz=64 batch=2 workers=0 seed=7 "
      "precision=auto project=runs -q";
  REQUIRE_MESSAGE(run_in(dir.path(), fit + " name=a", &out) == 0, out);
  REQUIRE_MESSAGE(run_in(dir.path(), fit + " name=b", &out) == 0, out);
  const std::string a = results_without_time(dir / "runs/a/results.csv");
  CHECK(std::count(a.begin(), a.end(), '\n') == 3);  // the header and two epochs
  CHECK(a == results_without_time(dir / "runs/b/results.csv"));
  // The decision and its reason, logged alike and recorded in args.yaml.
  const std::string decided = precision_line(dir / "runs/a/train.log");
  CHECK_FALSE(decided.empty());
  CHECK(decided == precision_line(dir / "runs/b/train.log"));
  const std::string used = decided.find("-> bf16") != std::string::npos ? "bf16" : "fp32";
  for (const char* run : {"a", "b"}) {
    const std::string args = trainer::test::read_text(dir / "runs" / run / "args.yaml");
    CHECK(args.find("precision: auto\n") != std::string::npos);
    CHECK(args.find("precision_used: " + used + "\n") != std::string::npos);
  }
}
