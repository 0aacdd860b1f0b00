// Checkpoints the reference wrote itself, read without Python: the oracle (Ultralytics 8.4.190)
// trains yolo26n one epoch at imgsz 32 for each task (detect on coco8, pose on coco8-pose, segment
// on coco8's images with coco128's polygons, OBB on `trainer synth --task obb`) and saves an
// untrained yolo26n and yolo11n of every task as its save_model does (tests/parity/oracle.py
// reference_checkpoints). Each file's weights must equal the state_dict() the reference loads
// from it bit for bit after fp16 -> fp32, its architecture and class names must be the ones it
// records, and `trainer val` on the trained detect and pose files must give the reference's own
// val predictions on them. Fine-tuning from them (engine::fine_tune_model) must transfer what the
// reference's own DetectionModel.load transfers (oracle transfer): its count, the rebuilt class
// branches' shapes, the rows remapped by class name, every tensor it takes from the source, and
// every element of its initialisation that does not depend on the seed.
#include <doctest/doctest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>

#include "core/task.h"
#include "demo/synthetic_obb_dataset.h"
#include "engine/checkpoint/fine_tune.h"
#include "engine/checkpoint/model_from_weights.h"
#include "engine/task/task_definition.h"
#include "integration/coco8_seg_subset.h"
#include "model/reference_architecture.h"
#include "model/weights_io.h"
#include "parity_oracle.h"
#include "prediction_match.h"
#include "test_support.h"

using namespace trainer;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct ReferenceFiles {
  test::TempDir dir;
  json listing;  // [{"file", "task", "model", "nc", "names"}]
  fs::path detect_data, pose_data, segment_data, obb_data;
};

// The oracle's checkpoints, made once per process (about 40 s on 2 cores).
const ReferenceFiles& reference_files(const std::string& python, const fs::path& coco8,
                                      const fs::path& coco8_pose, const fs::path& coco128) {
  static std::unique_ptr<ReferenceFiles> files;
  if (files) return *files;
  auto f = std::make_unique<ReferenceFiles>();
  const fs::path dir = f->dir.path();
  f->detect_data = test::reference_data_yaml(dir, "coco8.yaml", coco8);
  f->pose_data = test::reference_data_yaml(dir, "coco8-pose.yaml", coco8_pose);
  f->segment_data = test::write_coco8_seg_subset(coco128, dir / "seg");
  demo::SyntheticOptions obb;
  obb.train_images = 8;
  obb.val_images = 4;
  obb.image_size = 64;
  obb.max_objects = 3;
  obb.min_object_size = 16;
  obb.max_object_size = 48;
  const fs::path obb_yaml = demo::generate_synthetic_obb_dataset(dir / "obb", obb).dataset_yaml;
  // The reference resolves a relative `path:` against its own datasets folder: make it absolute.
  test::write_text(obb_yaml, std::regex_replace(test::read_text(obb_yaml),
                                                std::regex("^path: .*$", std::regex::multiline),
                                                "path: " + (dir / "obb").string()));
  test::run_oracle(python, "reference_checkpoints '" + dir.string() + "' '" +
                               f->detect_data.string() + "' '" + f->pose_data.string() + "' '" +
                               (dir / "seg" / "coco8_seg.json").string() + "' '" +
                               (coco128 / "images" / "train2017").string() + "' '" +
                               obb_yaml.string() + "'");
  std::ifstream in(dir / "checkpoints.json");
  REQUIRE(in.good());
  f->listing = json::parse(in);
  f->obb_data = obb_yaml;
  files = std::move(f);
  return *files;
}

// One fine-tuning case for the oracle's transfer command and for ours.
struct TransferCase {
  std::string id, source, target;  // target: a built-in name, "" for the source's own model
  core::Task task = core::Task::kDetect;
  std::vector<std::string> names;
  bool cls_remap = true;
};

std::vector<std::string> renamed(const std::vector<std::string>& names) {
  std::vector<std::string> out = {"renamed-class"};
  out.insert(out.end(), names.rbegin(), names.rend());
  return out;
}

// Fine-tunes from the oracle's checkpoints onto 3 classes (two of them COCO's, in other
// spellings), onto "renamed-class" plus the source's classes reversed, without cls_remap, onto
// another scale and from the other family, and compares with the reference's own load.
void check_transfers(const ReferenceFiles& files, const std::string& python) {
  std::map<std::string, std::vector<std::string>> names;  // file name -> class names
  for (const auto& entry : files.listing) {
    names[fs::path(entry["file"].get<std::string>()).filename().string()] =
        entry["names"].get<std::vector<std::string>>();
  }
  const std::vector<std::string> three = {"dog", " PERSON ", "Unicorn"};
  const std::vector<TransferCase> cases = {
      {"u26", "untrained-yolo26n.pt", "", core::Task::kDetect, three},
      {"u26_to_s", "untrained-yolo26n.pt", "yolo26s", core::Task::kDetect, three},
      {"u11_to_26", "untrained-yolo11n.pt", "yolo26n", core::Task::kDetect, three},
      {"detect", "trained-detect.pt", "", core::Task::kDetect, {"renamed-class", "ITEM "}},
      {"pose", "trained-pose.pt", "", core::Task::kPose, three},
      {"segment", "trained-segment.pt", "", core::Task::kSegment, three},
      {"segment_renamed", "trained-segment.pt", "", core::Task::kSegment,
       renamed(names.at("trained-segment.pt"))},
      {"segment_no_remap", "trained-segment.pt", "", core::Task::kSegment, three, false},
      {"obb_renamed", "trained-obb.pt", "", core::Task::kObb, renamed(names.at("trained-obb.pt"))},
  };
  json combos = json::array();
  for (const auto& c : cases) {
    combos.push_back({{"id", c.id},
                      {"source", (files.dir.path() / c.source).string()},
                      {"target", c.target.empty() ? json(nullptr) : json(c.target + ".yaml")},
                      {"task", core::task_name(c.task)},
                      {"nc", c.names.size()},
                      {"names", c.names},
                      {"cls_remap", c.cls_remap},
                      {"kpt_shape", c.task == core::Task::kPose ? json({17, 3}) : json(nullptr)}});
  }
  const fs::path out = files.dir.path() / "transfer";
  fs::create_directories(out);
  test::write_text(out / "combos.json", combos.dump());
  test::run_oracle(python,
                   "transfer '" + out.string() + "' '" + (out / "combos.json").string() + "'");
  std::ifstream in(out / "transfer.json");
  REQUIRE(in.good());
  const json theirs_all = json::parse(in);

  for (const auto& c : cases) {
    CAPTURE(c.id);
    const json& theirs = theirs_all.at(c.id);
    const fs::path file = files.dir.path() / c.source;
    const engine::WeightsSource pretrained = engine::read_weights_source(file);
    CHECK(pretrained.names == names.at(c.source));
    model::ModelName name =
        c.target.empty()
            ? model::reference_model_name(*model::read_weights(file).reference, file.string())
            : model::parse_model_name(c.target);
    name.task = c.task;
    data::DatasetSpec dataset;
    dataset.names = c.names;
    if (c.task == core::Task::kPose) dataset.kpt_shape = std::array<int, 2>{17, 3};
    const auto task = engine::make_task_definition(c.task);
    const engine::FineTuned tuned =
        engine::fine_tune_model(*task, name, dataset, pretrained, c.cls_remap);
    MESSAGE(c.id << ": trainer " << tuned.report.transferred << "/" << tuned.report.total
                 << " (cls_width '" << model::class_widths_text(tuned.class_widths) << "', "
                 << tuned.report.matched_classes << " classes remapped), reference "
                 << theirs["transferred"].get<int>() << "/" << theirs["total"].get<int>());
    CHECK(tuned.report.transferred == theirs["transferred"].get<int64_t>());
    CHECK(tuned.report.total == theirs["total"].get<int64_t>());
    CHECK(tuned.report.matched_classes == theirs["matched"].get<int64_t>());

    // The same keys in the same order, with the same shapes: the rebuilt branches included.
    const model::NamedTensorList ours = model::state_dict(*tuned.model);
    const auto keys = theirs["keys"].get<std::vector<std::string>>();
    const auto shapes = theirs["shapes"].get<std::vector<std::vector<int64_t>>>();
    REQUIRE(ours.size() == keys.size());
    std::map<std::string, at::Tensor> mine;
    size_t same_shape = 0;
    for (size_t i = 0; i < ours.size(); ++i) {
      CHECK(ours[i].first == keys[i]);
      if (ours[i].second.sizes().vec() == shapes[i]) ++same_shape;
      mine[ours[i].first] = ours[i].second;
    }
    CHECK(same_shape == keys.size());
    // What it takes from the source, ours takes too.
    const std::map<std::string, at::Tensor> source(pretrained.weights.begin(),
                                                   pretrained.weights.end());
    size_t from_source = 0;
    for (const auto& key : theirs["from_source"].get<std::vector<std::string>>()) {
      if (torch::equal(mine.at(key), source.at(key).to(mine.at(key).scalar_type()))) {
        ++from_source;
      } else {
        MESSAGE(c.id << ": " << key << " differs from the source's");
      }
    }
    CHECK(from_source == theirs["from_source"].size());
    // The rest, where it does not depend on the seed: remapped rows, bias init, BN buffers.
    size_t equal = 0;
    const model::NamedTensorList expected =
        model::read_weights_file(out / ("transfer-" + c.id + ".pt"));
    for (const auto& [key, value] : expected) {
      const at::Tensor& m = mine.at(key);
      bool same = false;
      if (!value.is_floating_point()) {
        same = torch::equal(m, value.to(m.scalar_type()));
      } else {
        const at::Tensor fixed = ~torch::isnan(value);
        same = torch::equal(m.to(torch::kFloat).masked_select(fixed), value.masked_select(fixed));
      }
      if (same) {
        ++equal;
      } else {
        MESSAGE(c.id << ": " << key
                     << " differs where the reference's does not depend on the seed");
      }
    }
    CHECK(equal == expected.size());
  }
}

#define TRAINER_REFERENCE_FILES(var)                     \
  TRAINER_REQUIRE_ORACLE(python);                        \
  TRAINER_REQUIRE_SHARED_DATA(coco8, "coco8");           \
  TRAINER_REQUIRE_SHARED_DATA(coco8_pose, "coco8-pose"); \
  TRAINER_REQUIRE_SHARED_DATA(coco128, "coco128");       \
  const ReferenceFiles& var = reference_files(*python, *coco8, *coco8_pose, *coco128)

// The trained checkpoint of each task as weights alone: `trainer val`, `info`, `predict` and
// `fit model=` with no model= and no task keys, each reading the file once (the debug line every
// low-level read logs). Our own files: tests/integration/test_cli_weights_alone.cpp.
void check_weights_alone(const ReferenceFiles& files) {
  const std::string common = " imgsz=32 batch=4 workers=0 device=cpu precision=fp32 plots=false";
  const std::map<std::string, fs::path> data = {{"detect", files.detect_data},
                                                {"pose", files.pose_data},
                                                {"segment", files.segment_data},
                                                {"obb", files.obb_data}};
  const fs::path images = files.dir / "alone-images";  // one image to predict on (OBB's)
  fs::create_directories(images);
  for (const auto& entry : fs::recursive_directory_iterator(files.dir / "obb")) {
    if (entry.path().extension() == ".jpg" && fs::is_empty(images)) {
      fs::copy_file(entry.path(), images / entry.path().filename());
    }
  }
  REQUIRE_FALSE(fs::is_empty(images));
  for (const auto& [task, yaml] : data) {
    const fs::path ckpt = files.dir / ("trained-" + task + ".pt");
    const std::string project = " project=" + (files.dir / ("alone-" + task)).string();
    // The detect checkpoint was trained single_cls: its dataset with it.
    const std::string classes = task == "detect" ? " single_cls=true" : "";
    for (const std::string& command :
         {"val data=" + yaml.string() + " weights=" + ckpt.string() + common + classes + project,
          "info model=" + ckpt.string(),
          "predict weights=" + ckpt.string() + " source=" + images.string() +
              " imgsz=32 device=cpu" + project,
          "fit data=" + yaml.string() + " model=" + ckpt.string() + " epochs=1" + common + classes +
              project}) {
      CAPTURE(task);
      CAPTURE(command);
      std::string log;
      const int rc = test::run_command(std::string(TRAINER_BINARY) + " -v " + command, &log);
      CAPTURE(log);
      CHECK(rc == 0);
      CHECK(test::count_of(log, "reading weights file " + ckpt.string()) == 1);
      CHECK(test::count_of(log, "reading weights file") == 1);
    }
  }
}

}  // namespace

// One case, so that the oracle's checkpoints are made once (ctest runs each case in a process).
TEST_CASE(
    "parity: reference checkpoints of every task and family read natively, bit for bit, trainer "
    "val on them gives the reference's val predictions, and fine-tuning from them transfers what "
    "the reference's load transfers") {
  TRAINER_REFERENCE_FILES(files);
  REQUIRE(files.listing.size() == 13);  // 4 trained, 1 mid-training, 8 untrained
  for (const auto& entry : files.listing) {
    const fs::path file = entry["file"].get<std::string>();
    CAPTURE(file.filename().string());
    const model::WeightsFile ours = model::read_weights(file);
    REQUIRE(ours.reference.has_value());
    // The reference's own state_dict() of the same file, as fp32, written by torch.save.
    fs::path state_file = file;
    state_file.replace_extension(".state.pt");
    const model::NamedTensorList theirs = model::read_weights_file(state_file);
    REQUIRE(ours.weights.size() == theirs.size());
    size_t equal = 0;
    for (size_t i = 0; i < theirs.size(); ++i) {
      const auto& [key, value] = ours.weights[i];
      CHECK(key == theirs[i].first);  // the same keys, in state_dict() order
      if (value.scalar_type() == theirs[i].second.scalar_type() &&
          value.sizes() == theirs[i].second.sizes() && torch::equal(value, theirs[i].second)) {
        ++equal;
      }
    }
    CHECK(equal == theirs.size());
    // What it records: the architecture, the classes.
    const model::ModelName name = model::reference_model_name(*ours.reference, file.string());
    CHECK(name.display() == entry["model"].get<std::string>());
    CHECK(ours.reference->version == "8.4.190");
    std::vector<std::string> names;
    for (const auto& [index, text] : ours.reference->names) names.push_back(text);
    CHECK(names == entry["names"].get<std::vector<std::string>>());
    // And the model trainer builds from the file alone takes the weights, every key checked.
    const auto loaded = engine::load_model_from_weights(file, "", "");
    CHECK(loaded.dataset.nc() == entry["nc"].get<int>());
    CHECK(loaded.model->num_classes() == entry["nc"].get<int>());
  }

  // `trainer val` on the trained detect and pose files: the reference's val predictions.
  for (const auto& [task, data] :
       {std::pair<std::string, fs::path>{"detect", files.detect_data}, {"pose", files.pose_data}}) {
    CAPTURE(task);
    const fs::path ckpt = files.dir / ("trained-" + task + ".pt");
    const fs::path out = files.dir / ("val-" + task);
    std::string log;
    // configs/coco8.yaml names yolo26n: the checkpoint's own model (yolo26n-pose) is scored. One
    // epoch at imgsz 32 leaves scores near their prior (~1e-4), below the default conf; the detect
    // model was trained single_cls (80 classes' near-equal priors would tie at the max_det cut).
    const int rc = test::run_command(
        std::string(TRAINER_BINARY) + " val " + TRAINER_SOURCE_DIR +
            "/configs/coco8.yaml data=" + data.string() + " weights=" + ckpt.string() +
            " imgsz=64 batch=4 workers=0 device=cpu precision=fp32 conf=1.0e-7 project=" +
            out.string() + (task == "detect" ? " single_cls=true" : "") + " name=ours",
        &log);
    CAPTURE(log);
    REQUIRE(rc == 0);
    test::run_oracle(*python, "val_checkpoint '" + out.string() + "' '" + ckpt.string() + "' '" +
                                  data.string() + "' 64 4 conf=1.0e-7");
    std::ifstream mine_file(out / "ours" / "predictions.json");
    std::ifstream theirs_file(out / "val" / "predictions.json");
    REQUIRE(mine_file.good());
    REQUIRE(theirs_file.good());
    // Neither is a COCO val list: both write category ids as class + 1 (the reference's val takes
    // single_cls from the checkpoint's arguments).
    auto mine = test::predictions_from_json(json::parse(mine_file), 1);
    auto theirs = test::predictions_from_json(json::parse(theirs_file), 1);
    MESSAGE(task << ": predictions: trainer " << mine.size() << ", reference " << theirs.size());
    REQUIRE(theirs.size() > 20);
    CHECK(test::matched(theirs, mine) >= theirs.size() * 99 / 100);
    CHECK(test::matched(mine, theirs) >= mine.size() * 99 / 100);
  }

  check_weights_alone(files);
  check_transfers(files, *python);
}
