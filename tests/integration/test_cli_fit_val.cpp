// The CLI end to end: `trainer synth`, `trainer fit` and `trainer val` (predictions.json checked
// by pycocotools when it is installed, the TensorBoard events by TensorBoard's reader).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

using trainer::test::run_command;

namespace {
std::string trainer_binary() {
  return TRAINER_BINARY;
}
std::string venv_python() {
  return trainer::test::project_python();
}
}  // namespace

TEST_CASE("cli: synth, fit and val on the synthetic set write a run folder and predictions") {
  trainer::test::TempDir dir;
  std::string out;
  const auto data = dir.path() / "shapes";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() +
                          " --train 8 --val 4 --size 96 --max-objects 2",
                      &out) == 0);
  const auto yaml = data / "synthetic.yaml";
  REQUIRE(std::filesystem::exists(yaml));
  const std::string common = " data=" + yaml.string() +
                             " model=yolo26t imgsz=96 batch=4 nbs=4 workers=1 precision=fp32 "
                             "device=cpu plots=false project=" +
                             dir.path().string();
  REQUIRE(run_command(trainer_binary() + " -q fit" + common + " epochs=2 name=fit", &out) == 0);
  CHECK(out.find("run folder: ") != std::string::npos);
  const auto weights = dir.path() / "fit" / "weights" / "best.pt";
  REQUIRE(std::filesystem::exists(weights));
  REQUIRE(run_command(trainer_binary() + " val" + common + " name=val weights=" + weights.string(),
                      &out) == 0);
  CHECK(out.find("mAP50-95") != std::string::npos);
  CHECK(out.find("Average Precision") != std::string::npos);
  const auto predictions = dir.path() / "val" / "predictions.json";
  REQUIRE(std::filesystem::exists(predictions));
  // Without model=: the architecture the run recorded (yolo26t), not the default yolo26n, and the
  // same predictions.
  REQUIRE(run_command(trainer_binary() + " val data=" + yaml.string() +
                          " imgsz=96 batch=4 workers=1 device=cpu project=" + dir.path().string() +
                          " name=val_inferred weights=" + weights.string(),
                      &out) == 0);
  CHECK(out.find("model: yolo26t as its run recorded it") != std::string::npos);
  CHECK(trainer::test::read_text(dir.path() / "val_inferred" / "predictions.json") ==
        trainer::test::read_text(predictions));
  // Bad input: a checkpoint that is not one.
  trainer::test::write_text(dir.path() / "bad.ckpt", "junk");
  CHECK(run_command(trainer_binary() + " val" + common +
                        " name=bad weights=" + (dir.path() / "bad.ckpt").string(),
                    &out) == 2);
  CHECK(out.find("bad.ckpt: not a readable checkpoint") != std::string::npos);
}

TEST_CASE("cli: a pose model fits and validates on the synthetic stick figures") {
  trainer::test::TempDir dir;
  std::string out;
  const auto data = dir.path() / "poses";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() +
                          " --task pose --train 8 --val 4 --size 128 --max-objects 2",
                      &out) == 0);
  const std::string common = " data=" + (data / "pose.yaml").string() +
                             " model=yolo26t-pose imgsz=128 batch=4 nbs=4 workers=1 "
                             "precision=fp32 device=cpu plots=false project=" +
                             dir.path().string();
  REQUIRE(run_command(trainer_binary() + " -q fit" + common + " epochs=2 name=fit", &out) == 0);
  CHECK(out.find("pose mAP50-95") != std::string::npos);
  const std::string csv = trainer::test::read_text(dir.path() / "fit" / "results.csv");
  CHECK(csv.find("train/pose_loss,train/kobj_loss") != std::string::npos);
  CHECK(csv.find("metrics/mAP50-95(P)") != std::string::npos);
  const auto weights = dir.path() / "fit" / "weights" / "best.pt";
  REQUIRE(run_command(trainer_binary() + " val" + common + " name=val weights=" + weights.string(),
                      &out) == 0);
  CHECK(out.find("Pose(P") != std::string::npos);
  CHECK(out.find("IoU=0.50:0.95 | area=   all | maxDets= 20") != std::string::npos);  // keypoints
  const std::string predictions = trainer::test::read_text(dir.path() / "val" / "predictions.json");
  CHECK(predictions.find("\"keypoints\": [") != std::string::npos);
}

TEST_CASE("cli: trainer val on coco8 writes predictions.json that pycocotools accepts") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(root, "coco128");
  std::string out;
  if (run_command(venv_python() + " -c 'import pycocotools'", &out) != 0) {
    TRAINER_SKIP("pycocotools not installed in the venv (scripts/setup.sh installs it)");
  }
  trainer::test::TempDir dir;
  const std::string source = TRAINER_SOURCE_DIR;
  // val needs weights: those of one short epoch (val off, 64 px) of the same model.
  REQUIRE(run_command(trainer_binary() + " -q fit " + source +
                          "/configs/coco8.yaml model=yolo26t epochs=1 imgsz=64 val=false "
                          "plots=false workers=1 precision=fp32 name=fit project=" +
                          dir.path().string(),
                      &out) == 0);
  REQUIRE(run_command(trainer_binary() + " val " + source +
                          "/configs/coco8.yaml model=yolo26t conf=0.00001 name=val weights=" +
                          (dir.path() / "fit" / "weights" / "last.pt").string() +
                          " project=" + dir.path().string(),
                      &out) == 0);
  const auto predictions = dir.path() / "val" / "predictions.json";
  REQUIRE(std::filesystem::exists(predictions));
  // coco8's val images are train2017 images that coco128's json also holds: pycocotools loads the
  // results against it (image ids from numeric file stems, 91-category ids) and evaluates them.
  const std::string script =
      "import sys\n"
      "from pycocotools.coco import COCO\n"
      "from pycocotools.cocoeval import COCOeval\n"
      "gt = COCO(sys.argv[1])\n"
      "dt = gt.loadRes(sys.argv[2])\n"
      "e = COCOeval(gt, dt, 'bbox')\n"
      "e.params.imgIds = sorted({d['image_id'] for d in dt.dataset['annotations']})\n"
      "e.evaluate(); e.accumulate(); e.summarize()\n"
      "print('PYCOCOTOOLS_OK', len(dt.dataset['annotations']))\n";
  trainer::test::write_text(dir.path() / "check.py", script);
  REQUIRE(run_command(venv_python() + " " + (dir.path() / "check.py").string() + " " +
                          (*root / "annotations" / "instances_train2017.json").string() + " " +
                          predictions.string(),
                      &out) == 0);
  CHECK(out.find("PYCOCOTOOLS_OK") != std::string::npos);
}

TEST_CASE("cli: a fit's TensorBoard events hold every results.csv value, read by TensorBoard") {
  std::string out;
  if (run_command("'" + venv_python() + "' -c 'import tensorboard'", &out) != 0) {
    TRAINER_SKIP("tensorboard not installed in the venv (scripts/setup.sh installs it)");
  }
  trainer::test::TempDir dir;
  const auto data = dir.path() / "shapes";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() +
                          " --train 8 --val 4 --size 96 --max-objects 2",
                      &out) == 0);
  REQUIRE(run_command(trainer_binary() + " -q fit data=" + (data / "synthetic.yaml").string() +
                          " model=yolo26t imgsz=96 batch=4 nbs=4 workers=1 precision=fp32 "
                          "device=cpu epochs=2 name=fit project=" +
                          dir.path().string(),
                      &out) == 0);
  const auto run = dir.path() / "fit";
  int event_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(run)) {
    event_files += entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  }
  CHECK(event_files == 1);
  REQUIRE(
      run_command("'" + venv_python() + "' '" TRAINER_TENSORBOARD_SCRIPT "' '" + run.string() + "'",
                  &out) == 0);
  // What TensorBoard read: (tag, step) -> value, and the images' (tag, step).
  std::map<std::pair<std::string, int64_t>, float> scalars;
  std::set<std::pair<std::string, int64_t>> images;
  std::istringstream lines(out);
  std::string kind;
  while (lines >> kind) {
    int64_t step = 0;
    std::string tag;
    if (kind == "scalar") {
      std::string hex;
      lines >> step >> hex >> tag;
      const auto bits = static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
      float value = 0;
      std::memcpy(&value, &bits, sizeof value);
      scalars[{tag, step}] = value;
    } else {
      REQUIRE_MESSAGE(kind == "image", out);
      int height = 0, width = 0;
      size_t size = 0;
      lines >> step >> height >> width >> size >> tag;
      CHECK(height > 0);
      CHECK(width > 0);
      CHECK(size > 0);
      images.insert({tag, step});
    }
  }
  // Every non-NaN results.csv cell but the epoch, at step = epoch; the csv keeps 6 digits.
  std::istringstream csv(trainer::test::read_text(run / "results.csv"));
  std::string line;
  REQUIRE(std::getline(csv, line));
  std::vector<std::string> columns;
  std::istringstream header(line);
  for (std::string c; std::getline(header, c, ',');) columns.push_back(c);
  size_t expected = 0;
  int rows = 0;
  while (std::getline(csv, line)) {
    std::istringstream row(line);
    std::vector<double> values;
    for (std::string v; std::getline(row, v, ',');) values.push_back(std::stod(v));
    REQUIRE(values.size() == columns.size());
    const auto step = static_cast<int64_t>(values[0]);
    for (size_t c = 1; c < columns.size(); ++c) {
      if (std::isnan(values[c])) continue;
      CAPTURE(columns[c]);
      CAPTURE(step);
      REQUIRE(scalars.count({columns[c], step}) == 1);
      CHECK(scalars.at({columns[c], step}) == doctest::Approx(values[c]).epsilon(1e-5));
      ++expected;
    }
    CHECK(scalars.count({"time/epoch", step}) == 1);
    ++expected;
    ++rows;
  }
  CHECK(rows == 2);
  CHECK(scalars.size() == expected);
  CHECK(images.count({"train_batch0", 1}) == 1);
  CHECK(images.count({"results", 2}) == 1);
}
