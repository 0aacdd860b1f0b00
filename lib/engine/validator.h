// Validation on the val split: forward, val loss, decode and speed here; scoring by the task.
//
// Why: the fit loop (every epoch, on a copy of the EMA weights), `trainer val` and the tests all
// score a model the same way. This is the task-free part (batching, forward, timing, loss, one
// host copy of the decoded rows per batch); each image's rows go to the task's scorer
// (engine/task/task_scorer.h), which keeps the reference trainer's metric (lib/eval/
// reference_metric.h, whose mAP50-95 makes the fitness) and the COCO protocol (identical to
// pycocotools, lib/eval/coco_eval.h).
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <memory>

#include "core/config.h"
#include "data/coco_json.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "engine/validation_result.h"
#include "engine/validation_truth.h"
#include "loss/yolo_loss.h"
#include "model/yolo_model.h"

namespace trainer::distributed {
class Group;
}

namespace trainer::engine {

struct ValidationOptions {
  int64_t max_batches = 0;  // 0 = the whole split (the seeds' short fit uses 4)
  bool coco = true;         // also run the COCO protocol
  // Return every detection (for predictions.json). Segmentation: masks are then made at the input
  // resolution for the (M) metric too, as the reference's save_json validation does
  // (engine/task/segment_scorer.h), and encoded as RLE at the original size.
  bool keep_detections = false;
  model::PredictOptions predict;  // conf 0.001, iou 0.7, max_det 300 (the reference's val values)
  // The forward pass under BF16 autocast: the run's resolved precision (fit passes its
  // PrecisionDecision's), never re-read from a config.
  bool bf16 = false;
  // For the fault tests: called after each of this rank's batches with its index in the plan.
  std::function<void(int64_t batch)> after_batch;

  // From the config's conf (0.01 for an OBB run left at the default 0.001), iou, max_det and
  // val_batches; bf16 when `precision: bf16` is asked (`auto` is left to the caller, fp32 here).
  static ValidationOptions from_config(const core::TrainConfig& config);
};

class Validator {
 public:
  // `standalone`: `trainer val` (batches of `batch`); otherwise the fit loop's (2 x batch).
  // `group` (of more than one rank): a sharded validation, every rank of the group constructing
  // its validator the same way on its own device (engine/validation_shards.h).
  Validator(std::shared_ptr<const data::DatasetIndex> val_set, const data::DatasetSpec& spec,
            const core::TrainConfig& config, c10::Device device, bool standalone = false,
            std::shared_ptr<distributed::Group> group = nullptr);
  ~Validator();

  // Scores `model` (switched to eval mode for the call, its mode restored) with its task's scorer.
  // `criterion` (optional) gives the val loss. Sharded: every rank of the group calls it; rank 0
  // returns what one process would have (equal bit for bit), the others only their share's
  // `images` and times, with `scored` false.
  ValidationResult run(model::YoloModelImpl& model, loss::YoloLoss* criterion,
                       const ValidationOptions& options);

  // The category id written for class `cls` (COCO: the 91-id map; a json dataset: its ids).
  int64_t category_id(int cls) const { return truth_.category_ids.at(static_cast<size_t>(cls)); }
  // The ground truth the COCO protocol uses (the val json when the dataset has one).
  const data::CocoFile& ground_truth() const { return truth_.coco; }
  const data::DatasetIndex& dataset() const { return *val_set_; }

 private:
  std::shared_ptr<const data::DatasetIndex> val_set_;
  data::DatasetSpec spec_;
  core::TrainConfig config_;
  c10::Device device_;
  std::unique_ptr<data::Loader> loader_;
  ValidationTruth truth_;
  std::shared_ptr<distributed::Group> group_;  // null or one rank: not sharded
};

}  // namespace trainer::engine
