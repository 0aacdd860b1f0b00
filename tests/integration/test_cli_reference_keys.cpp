// The reference's training keys end to end through the CLI on a generated dataset: fraction,
// single_cls, rect, multi_scale and save_json in one run; classes and time in another; dropout
// refused; and a resume that repeats the original command line (config file included) accepted
// while a real change is refused with both values.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "test_support.h"

using trainer::test::run_command;

namespace {

std::string trainer_binary() {
  return TRAINER_BINARY;
}

int data_rows(const std::filesystem::path& csv) {
  std::istringstream in(trainer::test::read_text(csv));
  std::string line;
  int rows = -1;  // the header
  while (std::getline(in, line)) rows += line.empty() ? 0 : 1;
  return rows;
}

}  // namespace

TEST_CASE("cli: fraction, single_cls, rect, multi_scale, save_json, classes, time, dropout") {
  trainer::test::TempDir dir;
  std::string out;
  const auto data = dir.path() / "shapes";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() +
                          " --train 16 --val 4 --size 96 --max-objects 2",
                      &out) == 0);
  const std::string common =
      " model=yolo26t data=" + (data / "synthetic.yaml").string() +
      " imgsz=96 batch=4 nbs=4 workers=1 precision=fp32 device=cpu plots=false seed=1 project=" +
      dir.path().string();

  REQUIRE(run_command(trainer_binary() + " fit" + common +
                          " epochs=1 name=a fraction=0.5 single_cls=true rect=true "
                          "multi_scale=0.25 save_json=true",
                      &out) == 0);
  CAPTURE(out);
  CHECK(out.find("fraction=0.5: training on the first 8 of 16 images") != std::string::npos);
  CHECK(out.find("single class 'item'") != std::string::npos);
  CHECK(out.find("shuffle is off") != std::string::npos);
  const auto predictions = dir.path() / "a" / "predictions.json";
  REQUIRE(std::filesystem::exists(predictions));
  // One class: every detection has the same category id.
  std::set<std::string> categories;
  const std::string json = trainer::test::read_text(predictions);
  const std::regex category(R"("category_id":\s*(\d+))");
  for (std::sregex_iterator it(json.begin(), json.end(), category), end; it != end; ++it) {
    categories.insert((*it)[1]);
  }
  CHECK(categories.size() <= 1);
  const std::string args = trainer::test::read_text(dir.path() / "a" / "args.yaml");
  CHECK(args.find("single_cls: true") != std::string::npos);
  CHECK(args.find("multi_scale: 0.25") != std::string::npos);

  // time: a budget of 3.6 ms ends the run at the first optimizer step, then validates and saves.
  REQUIRE(run_command(
              trainer_binary() + " fit" + common + " epochs=20 name=b classes=[0,2] time=0.000001",
              &out) == 0);
  CHECK(out.find("classes [0, 2]") != std::string::npos);
  CHECK(out.find("budget is used up after 1 epochs") != std::string::npos);
  CHECK(data_rows(dir.path() / "b" / "results.csv") == 1);
  CHECK(std::filesystem::exists(dir.path() / "b" / "weights" / "last.ckpt"));
  CHECK(run_command(trainer_binary() + " fit" + common + " epochs=1 name=c classes=[9]", &out) !=
        0);
  CHECK(out.find("class 9 does not exist") != std::string::npos);

  CHECK(run_command(trainer_binary() + " fit" + common + " epochs=1 name=d dropout=0.1", &out) !=
        0);
  CHECK(out.find("applies to classification heads only") != std::string::npos);
}

TEST_CASE("cli: resume accepts the original command line and refuses real changes") {
  trainer::test::TempDir dir;
  std::string out;
  const auto data = dir.path() / "shapes";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() +
                          " --train 8 --val 4 --size 96 --max-objects 2",
                      &out) == 0);
  const auto config = dir.path() / "cfg.yaml";
  trainer::test::write_text(config,
                            "model: yolo26t\ndata: shapes/synthetic.yaml\nimgsz: 96\n"
                            "batch: 4\nnbs: 4\nworkers: 1\nprecision: fp32\ndevice: cpu\n"
                            "plots: false\nval: false\n");
  const std::string command = trainer_binary() + " fit " + config.string() +
                              " epochs=1 project=" + dir.path().string() + " name=run";
  REQUIRE(run_command(command, &out) == 0);
  const std::string last = (dir.path() / "run" / "weights" / "last.pt").string();
  // The same command line with resume= added: accepted (this run is complete, which says so).
  CHECK(run_command(command + " resume=" + last, &out) != 0);
  CAPTURE(out);
  CHECK(out.find("cannot be changed") == std::string::npos);
  CHECK(out.find("already finished") != std::string::npos);
  // A changed value in the file or on the command line is refused, naming both values.
  trainer::test::write_text(config, trainer::test::read_text(config) + "lr0: 0.02\n");
  CHECK(run_command(command + " epochs=3 resume=" + last, &out) != 0);
  CHECK(out.find("epochs: cannot be changed when resuming (the checkpoint has 1, the command "
                 "line asks for 3)") != std::string::npos);
  CHECK(out.find("lr0: cannot be changed when resuming (the checkpoint has 0.01, the command "
                 "line asks for 0.02)") != std::string::npos);
}
