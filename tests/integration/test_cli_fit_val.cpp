// The CLI end to end: `trainer synth`, `trainer fit` and `trainer val` (predictions.json checked
// by pycocotools when it is installed).
#include <doctest/doctest.h>

#include <filesystem>

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
  REQUIRE(run_command(trainer_binary() + " val " + source +
                          "/configs/coco8.yaml model=yolo26t conf=0.00001 name=val project=" +
                          dir.path().string(),
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
