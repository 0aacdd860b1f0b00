// The pose task's scorer: boxes (B) as detection, and keypoints (P) by the reference's OKS with
// the GT box area (input pixels) x 0.53 and GT visibility only; COCO results entries carry the
// keypoints in original pixels, scored by the COCO keypoint protocol.
#pragma once

#include <vector>

#include "engine/task/box_scorer.h"

namespace trainer::engine {

class PoseScorer : public BoxScorer {
 public:
  // Throws core::ConfigError when the model's keypoints and the dataset's kpt_shape differ.
  explicit PoseScorer(const ScorerSetup& setup);

  void add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) override;
  void finish(const data::CocoFile* coco_truth, const std::vector<eval::Detection>& detections,
              ValidationResult& result) override;

 protected:
  std::vector<LetterboxedTruth> batch_truth(const ScoredBatch& batch) const override;
  std::vector<eval::ReferenceMetric*> metrics() override { return {&metric_, &pose_metric_}; }

 private:
  std::vector<double> sigmas_;  // the OKS sigmas (the dataset's, COCO's or 1/K)
  eval::ReferenceMetric pose_metric_;
};

}  // namespace trainer::engine
