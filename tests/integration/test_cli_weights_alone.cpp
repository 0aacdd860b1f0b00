// Weights alone are enough, for every task: after a short fit on data other than the defaults
// (pose: 7 keypoints, OBB: rotated boxes, segment: coco128's polygons), `trainer val`, `predict`,
// `info` and `fit model=` take the run's best.pt, last.pt or best.ckpt with no model= and no task
// keys, and read the file once (the debug line every low-level read logs, counted here). The
// reference's own checkpoints go through the same reader: tests/parity/
// test_reference_checkpoint_parity.cpp runs these commands on them.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "integration/coco8_seg_subset.h"
#include "test_support.h"

namespace fs = std::filesystem;
using trainer::test::count_of;
using trainer::test::run_command;

namespace {

const std::string kCommon = " imgsz=64 batch=4 workers=0 device=cpu precision=fp32 plots=false";

// `trainer -v COMMAND`: must succeed and read `weights` exactly once.
std::string run_reading_once(const std::string& command, const fs::path& weights) {
  std::string out;
  const int rc = run_command(std::string(TRAINER_BINARY) + " -v " + command, &out);
  CAPTURE(command);
  CAPTURE(out);
  CHECK(rc == 0);
  CHECK(count_of(out, "reading weights file " + weights.string()) == 1);
  CHECK(count_of(out, "reading weights file") == 1);  // and nothing else
  CHECK(count_of(out, "error") == 0);
  return out;
}

// A 1-epoch fit of `model` on `data`, then every command on each of its weights files.
void check_weights_alone(const fs::path& dir, const fs::path& data, const std::string& model,
                         const std::string& table_column) {
  std::string out;
  const std::string project = " project=" + dir.string();
  REQUIRE(run_command(std::string(TRAINER_BINARY) + " -q fit data=" + data.string() +
                          " model=" + model + " epochs=1 name=fit" + kCommon + project,
                      &out) == 0);
  const fs::path image = dir / "image.jpg";
  for (const std::string file : {"best.pt", "last.pt", "best.ckpt"}) {
    CAPTURE(file);
    const fs::path weights = dir / "fit" / "weights" / file;
    REQUIRE(fs::exists(weights));
    const std::string w = weights.string();
    out = run_reading_once("val data=" + data.string() + " weights=" + w + kCommon + project +
                               " name=val exist_ok=true",
                           weights);
    CHECK(out.find("model: " + model + " as its run recorded it") != std::string::npos);
    CHECK(out.find(table_column) != std::string::npos);
    out = run_reading_once("info model=" + w, weights);
    CHECK(out.find("hold " + model) != std::string::npos);
    out = run_reading_once("predict weights=" + w + " source=" + (dir / "images").string() +
                               " imgsz=64 device=cpu exist_ok=true name=predict" + project,
                           weights);
    CHECK(fs::exists(dir / "predict"));
    out = run_reading_once("fit data=" + data.string() + " model=" + w + " epochs=1" + kCommon +
                               project + " name=tuned exist_ok=true",
                           weights);
    CHECK(out.find("Transferred") != std::string::npos);
  }
}

// A folder of a few images for predict, from the dataset's own.
void copy_images(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  int n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(from)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".jpg" || ext == ".png") && n++ < 2) {
      fs::copy_file(entry.path(), to / entry.path().filename());
    }
  }
  REQUIRE(n > 0);
}

void synth(const fs::path& dir, const std::string& task) {
  std::string out;
  REQUIRE(run_command(std::string(TRAINER_BINARY) + " -q synth " + (dir / "data").string() +
                          " --train 4 --val 4 --size 64 --max-objects 2" +
                          (task.empty() ? "" : " --task " + task),
                      &out) == 0);
  copy_images(dir / "data" / "images", dir / "images");
}

}  // namespace

TEST_CASE("cli: detect weights alone (best.pt, last.pt, best.ckpt) for val, info, predict, fit") {
  trainer::test::TempDir dir;
  synth(dir.path(), "");
  check_weights_alone(dir.path(), dir / "data" / "synthetic.yaml", "yolo26t", "mAP50-95");
}

TEST_CASE("cli: pose weights alone, 7 keypoints: the head and the data follow the weights") {
  trainer::test::TempDir dir;
  synth(dir.path(), "pose");
  check_weights_alone(dir.path(), dir / "data" / "pose.yaml", "yolo26t-pose", "Pose(P");
}

TEST_CASE("cli: OBB weights alone: the rotated boxes follow the weights") {
  trainer::test::TempDir dir;
  synth(dir.path(), "obb");
  check_weights_alone(dir.path(), dir / "data" / "obb.yaml", "yolo26t-obb", "mAP50-95");
}

TEST_CASE("cli: segment weights alone, coco128's polygons: the masks follow the weights") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  trainer::test::TempDir dir;
  const fs::path data = trainer::test::write_coco8_seg_subset(*coco128, dir / "seg");
  copy_images(*coco128 / "images" / "train2017", dir / "images");
  check_weights_alone(dir.path(), data, "yolo26t-seg", "Mask(P");
}

TEST_CASE("cli: a weights file that records nothing is refused once, naming the way out") {
  trainer::test::TempDir dir;
  synth(dir.path(), "");
  std::string out;
  REQUIRE(run_command(std::string(TRAINER_BINARY) +
                          " -q fit data=" + (dir / "data" / "synthetic.yaml").string() +
                          " model=yolo26t epochs=1 name=fit" + kCommon +
                          " project=" + dir.path().string(),
                      &out) == 0);
  const fs::path loose = dir / "loose.pt";  // a .pt away from its run folder: no args.yaml
  fs::copy_file(dir / "fit" / "weights" / "best.pt", loose);
  CHECK(run_command(std::string(TRAINER_BINARY) + " predict weights=" + loose.string() +
                        " source=" + (dir / "images").string(),
                    &out) != 0);
  CHECK(out.find("pass model=NAME") != std::string::npos);
  CHECK(count_of(out, "\n") <= 2);  // one clear line, no stack trace
  CHECK(run_command(std::string(TRAINER_BINARY) +
                        " fit data=" + (dir / "data" / "synthetic.yaml").string() +
                        " model=" + loose.string() + kCommon,
                    &out) != 0);
  CHECK(out.find("model=yolo26n pretrained=" + loose.string()) != std::string::npos);
  // A dataset with another number of classes than the weights': one line naming both.
  CHECK(run_command(std::string(TRAINER_BINARY) + " val data=" +
                        (dir / "data" / "synthetic.yaml").string() + " single_cls=true weights=" +
                        (dir / "fit" / "weights" / "best.pt").string() + kCommon,
                    &out) != 0);
  CHECK(out.find("classes (as ") != std::string::npos);
  CHECK(out.find("single_cls=true if it was trained with one class") != std::string::npos);
  // Told the model, the same file scores: the tensors were all it lacked.
  CHECK(run_command(std::string(TRAINER_BINARY) +
                        " val data=" + (dir / "data" / "synthetic.yaml").string() +
                        " model=yolo26t weights=" + loose.string() + kCommon +
                        " project=" + dir.path().string() + " name=v",
                    &out) == 0);
}
