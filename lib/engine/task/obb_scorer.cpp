// See obb_scorer.h.
// Tested by tests/engine/test_validation_shards.cpp: OBB Validator run identical sharded vs single;
//   OBB mAP50-95 golden band in test_obb_overfit_golden.
#include "engine/task/obb_scorer.h"

#include "data/letterbox_inverse.h"
#include "geometry/rotated_box.h"

namespace trainer::engine {

std::vector<LetterboxedTruth> ObbScorer::batch_truth(const ScoredBatch& b) const {
  return letterboxed_truth(b.batch.labels, b.batch.images.size(0),
                           static_cast<float>(b.input_width), static_cast<float>(b.input_height),
                           at::Tensor(), b.batch.rboxes);
}

void ObbScorer::add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) {
  std::vector<geometry::RotatedBox> rotated;  // input pixels
  for (int64_t k = 0; k < image.rows.count; ++k) {
    const model::RowView row = image.rows[k];
    const auto box = row.box();
    rotated.push_back({box[0], box[1], box[2], box[3], row.angle()});
    eval::Detection entry = image.entry;
    entry.class_index = row.cls();
    entry.category_id = setup_.category_ids.at(static_cast<size_t>(row.cls()));
    entry.score = row.score();
    const geometry::RotatedBox original = data::to_original_rbox(rotated.back(), image.geometry);
    entry.rbox = {original.cx, original.cy, original.w, original.h, original.angle};
    for (const auto& c : geometry::corners(original))
      entry.poly.insert(entry.poly.end(), {c.x, c.y});
    entry.bbox_xywh = geometry::extent_xywh(original);
    detections.push_back(std::move(entry));
  }
  // ProbIoU (floor 0) of every GT with every prediction, [gt][pred], in input pixels.
  const LetterboxedTruth& gt = truth(image.position);
  std::vector<float> overlaps;
  overlaps.reserve(gt.rboxes.size() * rotated.size());
  for (const auto& truth_box : gt.rboxes) {
    for (const auto& pred : rotated) {
      overlaps.push_back(static_cast<float>(geometry::probiou(truth_box, pred)));
    }
  }
  metric_.add_image_overlaps(overlaps, scores(image.rows), classes(image.rows), gt.classes);
}

void ObbScorer::finish(const data::CocoFile* /*coco_truth*/,
                       const std::vector<eval::Detection>& /*detections*/,
                       ValidationResult& result) {
  result.metric = metric_.compute();
}

}  // namespace trainer::engine
