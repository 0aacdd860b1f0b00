// What one validation measured: the reference's metric and the COCO protocol on the boxes, the
// second match of a task scored twice, the val loss, the speed and (when kept) the detections.
//
// Why its own header: the tasks read it (results.csv values, fitness, tables, predictions files)
// without the validator's loader and model includes; no slot in it belongs to one task.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/coco_eval.h"
#include "eval/coco_results.h"
#include "eval/reference_metric.h"

namespace trainer::engine {

struct ValidationResult {
  eval::ReferenceMetric::Result metric;  // the boxes' (B): P, R, mAP50, mAP50-95 (OBB: rotated)
  std::optional<eval::CocoStats> coco;   // the COCO box protocol's 12 stats (not for OBB)
  // A task scored twice (pose: keypoints by OKS, its (P) columns; segmentation: masks by IoU,
  // (M)): the reference's metric on that match, its COCO protocol (keypoints: 10 stats; segm: 12,
  // only with keep_detections, whose masks are then encoded as RLE) and its name in summaries.
  std::optional<eval::ReferenceMetric::Result> second_metric;
  std::optional<eval::CocoStats> second_coco;
  std::string second_name;       // "pose", "mask"
  std::string second_coco_name;  // its COCO protocol's: "keypoint", "mask"
  double fitness = 0;  // the task's rule (TaskDefinition::fitness): picks the best checkpoint
  std::vector<double> loss_items;  // the criterion's items (o2o for end-to-end); empty without one
  int64_t images = 0;
  double preprocess_ms = 0, inference_ms = 0, postprocess_ms = 0;  // per image
  std::vector<eval::Detection> detections;  // when keep_detections (COCO results form)
  // False on the ranks other than 0 of a sharded validation: no metrics there, `images` and the
  // times are that rank's share.
  bool scored = true;
};

}  // namespace trainer::engine
