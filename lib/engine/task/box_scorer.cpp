// See box_scorer.h.
// Tested by tests/engine/test_validation_shards.cpp: detection Validator run (metrics, COCO stats,
//   detections, predictions.json) identical sharded vs single; no hand-checked values (mAP band in
//   test_overfit_golden).
#include "engine/task/box_scorer.h"

#include "data/letterbox_inverse.h"

namespace trainer::engine {

BoxScorer::BoxScorer(const ScorerSetup& setup)
    : setup_(setup), metric_(setup.num_classes, setup.max_det) {}

std::vector<LetterboxedTruth> BoxScorer::batch_truth(const ScoredBatch& b) const {
  return letterboxed_truth(b.batch.labels, b.batch.images.size(0),
                           static_cast<float>(b.input_width), static_cast<float>(b.input_height));
}

void BoxScorer::begin_batch(const ScoredBatch& batch) {
  truth_ = batch_truth(batch);
}

eval::Detection BoxScorer::results_entry(const ScoredImage& image,
                                         const model::RowView& row) const {
  eval::Detection entry = image.entry;
  entry.class_index = row.cls();
  entry.category_id = setup_.category_ids.at(static_cast<size_t>(row.cls()));
  entry.score = row.score();
  const std::array<float, 4> box = data::to_original_xyxy(row.box(), image.geometry);
  entry.bbox_xywh = {box[0], box[1], box[2] - box[0], box[3] - box[1]};
  return entry;
}

int64_t BoxScorer::first_label_row(int64_t position) const {
  int64_t first = 0;
  for (int64_t b = 0; b < position; ++b) first += static_cast<int64_t>(truth_.at(b).classes.size());
  return first;
}

std::vector<float> BoxScorer::scores(const model::HostRows& rows) const {
  std::vector<float> out;
  for (int64_t k = 0; k < rows.count; ++k) out.push_back(rows[k].score());
  return out;
}

std::vector<int> BoxScorer::classes(const model::HostRows& rows) const {
  std::vector<int> out;
  for (int64_t k = 0; k < rows.count; ++k) out.push_back(rows[k].cls());
  return out;
}

void BoxScorer::add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) {
  std::vector<std::array<float, 4>> boxes;
  for (int64_t k = 0; k < image.rows.count; ++k) {
    const model::RowView row = image.rows[k];
    boxes.push_back(row.box());
    detections.push_back(results_entry(image, row));
  }
  const LetterboxedTruth& gt = truth(image.position);
  metric_.add_image(boxes, scores(image.rows), classes(image.rows), gt.boxes, gt.classes);
}

void BoxScorer::finish(const data::CocoFile* coco_truth,
                       const std::vector<eval::Detection>& detections, ValidationResult& result) {
  result.metric = metric_.compute();
  if (coco_truth) result.coco = eval::evaluate_coco(*coco_truth, detections);
}

}  // namespace trainer::engine
