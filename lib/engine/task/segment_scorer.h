// The segmentation task's scorer: boxes (B) as detection, and masks (M) by the reference's mask
// IoU (engine/task/segment_mask_validation.h); with keep_detections the masks are made at the input
// resolution, mapped to the original image and written into the results entries as RLE, scored by
// the COCO segm protocol.
#pragma once

#include <vector>

#include "engine/task/box_scorer.h"

namespace trainer::engine {

class SegmentScorer : public BoxScorer {
 public:
  explicit SegmentScorer(const ScorerSetup& setup);

  void begin_batch(const ScoredBatch& batch) override;
  void add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) override;
  void finish(const data::CocoFile* coco_truth, const std::vector<eval::Detection>& detections,
              ValidationResult& result) override;

 protected:
  std::vector<eval::ReferenceMetric*> metrics() override { return {&metric_, &mask_metric_}; }

 private:
  eval::ReferenceMetric mask_metric_;
  at::Tensor protos_;       // the batch's prototypes (B, nm, mh, mw)
  at::Tensor batch_masks_;  // the batch's GT masks on the model's device
  bool overlap_masks_ = false;
  int64_t input_height_ = 0, input_width_ = 0;
};

}  // namespace trainer::engine
