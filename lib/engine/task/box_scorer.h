// Scoring on axis-aligned boxes: the detection task's scorer, and the (B) half of pose's and
// segmentation's. The reference's metric matches in letterboxed input pixels (8.4.190); only the
// COCO results entries (and the COCO protocol that reads them) are mapped back to the original
// image.
#pragma once

#include <vector>

#include "engine/task/task_scorer.h"
#include "engine/validation_truth.h"
#include "eval/reference_metric.h"

namespace trainer::engine {

class BoxScorer : public TaskScorer {
 public:
  explicit BoxScorer(const ScorerSetup& setup);

  void begin_batch(const ScoredBatch& batch) override;
  void add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) override;
  void finish(const data::CocoFile* coco_truth, const std::vector<eval::Detection>& detections,
              ValidationResult& result) override;

 protected:
  // The batch's truth in letterboxed pixels: boxes and classes (pose adds the keypoints, OBB the
  // rotated boxes).
  virtual std::vector<LetterboxedTruth> batch_truth(const ScoredBatch& batch) const;
  // The COCO results entry of one row: the image's entry, the class's category id, the score, the
  // box in original pixels.
  eval::Detection results_entry(const ScoredImage& image, const model::RowView& row) const;
  // The image's label rows in the batch: where its first row is, and its truth.
  int64_t first_label_row(int64_t position) const;
  const LetterboxedTruth& truth(int64_t position) const { return truth_.at(position); }
  std::vector<float> scores(const model::HostRows& rows) const;
  std::vector<int> classes(const model::HostRows& rows) const;
  std::vector<eval::ReferenceMetric*> metrics() override { return {&metric_}; }

  const ScorerSetup setup_;
  eval::ReferenceMetric metric_;

 private:
  std::vector<LetterboxedTruth> truth_;  // the current batch's, per image
};

}  // namespace trainer::engine
