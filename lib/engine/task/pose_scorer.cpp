// See pose_scorer.h.
// Tested by tests/engine/test_validation_shards.cpp: pose Validator run (box + OKS metrics)
//   identical sharded vs single; keypoint mAP band in test_pose_overfit_golden (coco8-pose).
#include "engine/task/pose_scorer.h"

#include <spdlog/spdlog.h>

#include <string>

#include "core/error.h"
#include "data/letterbox_inverse.h"
#include "eval/keypoint_similarity.h"
#include "loss/keypoint_sigmas.h"

namespace trainer::engine {

PoseScorer::PoseScorer(const ScorerSetup& setup)
    : BoxScorer(setup), pose_metric_(setup.num_classes, setup.max_det) {
  if (setup.spec.kpt_shape) {
    sigmas_ = loss::default_keypoint_sigmas((*setup.spec.kpt_shape)[0], (*setup.spec.kpt_shape)[1],
                                            setup.spec.kpt_oks_sigmas);
  }
  const int64_t count = setup.layout.keypoints.count;
  if (sigmas_.size() != static_cast<size_t>(count)) {
    throw core::ConfigError("the pose model has " + std::to_string(count) +
                            " keypoints but the dataset's kpt_shape has " +
                            std::to_string(sigmas_.size()));
  }
}

std::vector<LetterboxedTruth> PoseScorer::batch_truth(const ScoredBatch& b) const {
  return letterboxed_truth(b.batch.labels, b.batch.images.size(0),
                           static_cast<float>(b.input_width), static_cast<float>(b.input_height),
                           b.batch.keypoints);
}

void PoseScorer::add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) {
  const size_t first = detections.size();
  BoxScorer::add_image(image, detections);
  const model::KeypointShape kpt = setup_.layout.keypoints;
  std::vector<float> points;  // n x K x dims, input pixels
  for (int64_t k = 0; k < image.rows.count; ++k) {
    const model::RowView row = image.rows[k];
    points.insert(points.end(), row.extra_begin(), row.extra_end());
    eval::Detection& entry = detections[first + static_cast<size_t>(k)];
    for (int64_t p = 0; p < kpt.count; ++p) {
      const float* point = row.keypoint(p);
      const auto xy = data::to_original_point(point[0], point[1], image.geometry);
      entry.keypoints.push_back(xy[0]);
      entry.keypoints.push_back(xy[1]);
      entry.keypoints.push_back(kpt.dims == 3 ? point[2] : 1.0);
    }
  }
  // The reference's tp_p: OKS with the GT box area (input pixels) x 0.53, GT visibility only.
  const LetterboxedTruth& gt = truth(image.position);
  std::vector<float> areas;
  for (const auto& box : gt.boxes) {
    areas.push_back((box[2] - box[0]) * (box[3] - box[1]) * eval::kKeypointAreaFactor);
  }
  const auto oks =
      eval::reference_keypoint_oks(gt.keypoints, points, areas, static_cast<size_t>(kpt.count),
                                   static_cast<size_t>(kpt.dims), sigmas_);
  pose_metric_.add_image_overlaps(oks, scores(image.rows), classes(image.rows), gt.classes);
}

void PoseScorer::finish(const data::CocoFile* coco_truth,
                        const std::vector<eval::Detection>& detections, ValidationResult& result) {
  BoxScorer::finish(coco_truth, detections, result);
  result.second_name = "pose";
  result.second_coco_name = "keypoint";
  result.second_metric = pose_metric_.compute();
  if (!coco_truth) return;
  eval::CocoEvalOptions keypoints;
  keypoints.iou_type = eval::IouType::kKeypoints;
  keypoints.kpt_oks_sigmas = sigmas_;
  try {
    result.second_coco = eval::evaluate_coco(*coco_truth, detections, keypoints);
  } catch (const core::InputError& e) {  // e.g. an instances json without keypoints
    spdlog::warn("COCO keypoint evaluation skipped: {}", e.what());
  }
}

}  // namespace trainer::engine
