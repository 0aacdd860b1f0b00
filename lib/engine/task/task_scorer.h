// A task's scoring of a validation: begin a batch, add each image's detections, finish into the
// task's metrics. The validator (engine/validator.h) does the task-free part (batching, forward,
// timing, val loss, decode, one host copy per batch) and hands the rows here.
//
// Why: the validator used to branch on the task in its loop and keep a metric slot per task; a
// new task now brings its scorer (TaskDefinition::make_scorer) and the validator does not change.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "core/byte_stream.h"
#include "data/batch.h"
#include "data/coco_json.h"
#include "data/dataset_yaml.h"
#include "engine/validation_result.h"
#include "eval/coco_results.h"
#include "eval/reference_metric.h"
#include "model/detect_output.h"
#include "model/detection_rows.h"

namespace trainer::engine {

// What a scorer is made for: the model's rows and the run's classes and options.
struct ScorerSetup {
  const data::DatasetSpec& spec;             // classes; pose: kpt_shape and OKS sigmas
  const std::vector<int64_t>& category_ids;  // per class, for the COCO results entries
  model::RowLayout layout;                   // what the model's rows hold
  int num_classes = 0;
  int max_det = 300;
  // Every detection is kept for predictions.json (segmentation: masks then made at the input
  // resolution, as the reference's save_json validation, and encoded as RLE at the original size).
  bool keep_detections = false;
};

// One batch as the model saw it.
struct ScoredBatch {
  const data::Batch& batch;
  const model::DetectOutput& raw;  // the forward's outputs (segmentation: the prototypes)
  int64_t input_height = 0;
  int64_t input_width = 0;
  c10::Device device;  // where the model ran
};

// One image of the batch and its decoded detections (input pixels).
struct ScoredImage {
  int64_t position = 0;  // in the batch
  const data::ImageGeometry& geometry;
  model::HostRows rows;           // on the host
  const at::Tensor& device_rows;  // the same rows on the model's device
  eval::Detection entry;          // image id and file name: what each results entry starts from
};

class TaskScorer {
 public:
  virtual ~TaskScorer() = default;

  virtual void begin_batch(const ScoredBatch& batch) = 0;
  // Scores one image (each image once) and appends its COCO results entries to `detections`.
  virtual void add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) = 0;
  // The task's metrics into `result`; `coco_truth`: the ground truth of the images run, or null
  // when the COCO protocol is not asked for.
  virtual void finish(const data::CocoFile* coco_truth,
                      const std::vector<eval::Detection>& detections, ValidationResult& result) = 0;

  // Sharded validation: writes the statistics of the images added since the last call (bit-exact)
  // and removes them from this scorer; append_state adds such bytes, from any rank, as if those
  // images had been added here in that order. Throws std::runtime_error on bytes that do not hold
  // this scorer's statistics.
  void take_state(core::ByteWriter& out);
  void append_state(core::ByteReader& in);

 protected:
  // Every metric the scorer accumulates into, in a fixed order (its whole state between batches).
  virtual std::vector<eval::ReferenceMetric*> metrics() = 0;
};

}  // namespace trainer::engine
