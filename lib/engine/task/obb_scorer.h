// The OBB task's scorer: rotated boxes matched by ProbIoU (floor 0) in letterboxed input pixels
// (reference-tasks.md 3.5), the reference's metric only (no COCO protocol: `trainer eval
// --iou-type obb` scores predictions.json); results entries carry the rotated box, its corners
// and their extent in original pixels.
#pragma once

#include <vector>

#include "engine/task/box_scorer.h"

namespace trainer::engine {

class ObbScorer : public BoxScorer {
 public:
  using BoxScorer::BoxScorer;

  void add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) override;
  void finish(const data::CocoFile* coco_truth, const std::vector<eval::Detection>& detections,
              ValidationResult& result) override;

 protected:
  std::vector<LetterboxedTruth> batch_truth(const ScoredBatch& batch) const override;
};

}  // namespace trainer::engine
