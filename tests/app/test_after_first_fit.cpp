// The everyday workflows after a first fit, through the binary: val and predict of the run's
// weights with nothing but the weights (the run's dataset and image size come from its record),
// model= and weights= taking the same paths, and a fine-tuned run that still works once the
// weights it started from are deleted.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

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
