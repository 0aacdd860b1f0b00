// See segment_scorer.h.
// Tested by tests/engine/test_validation_shards.cpp: segmentation Validator run (box + mask
//   metrics) identical sharded vs single (needs coco128); mask mAP band in test_seg_overfit_golden.
#include "engine/task/segment_scorer.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "data/letterbox_inverse.h"
#include "engine/task/segment_mask_validation.h"
#include "eval/rle.h"
#include "model/mask_ops.h"

namespace trainer::engine {

SegmentScorer::SegmentScorer(const ScorerSetup& setup)
    : BoxScorer(setup), mask_metric_(setup.num_classes, setup.max_det) {}

void SegmentScorer::begin_batch(const ScoredBatch& batch) {
  BoxScorer::begin_batch(batch);
  protos_ = batch.raw.protos.front();
  // The batch's GT masks on the predictions' device, once per batch.
  batch_masks_ = batch.batch.masks.defined() ? batch.batch.masks.to(batch.device) : at::Tensor();
  overlap_masks_ = batch.batch.overlap_masks;
  input_height_ = batch.input_height;
  input_width_ = batch.input_width;
}

void SegmentScorer::add_image(const ScoredImage& image, std::vector<eval::Detection>& detections) {
  const bool native = setup_.keep_detections;
  const int64_t width = setup_.layout.width();
  const at::Tensor& rows = image.device_rows;
  // The detections' masks, uint8 (n, h, w): at prototype resolution, or the input's when native.
  const at::Tensor masks = model::predicted_masks(
      protos_[image.position],
      rows.narrow(1, model::kRowFixedColumns, width - model::kRowFixedColumns),
      rows.narrow(1, 0, 4), input_height_, input_width_, native);
  const size_t first = detections.size();
  BoxScorer::add_image(image, detections);
  if (native) {  // the masks at the original size, as RLE in predictions.json
    const at::Tensor original =
        data::masks_to_original(masks, image.geometry).to(at::kCPU).contiguous();
    for (int64_t k = 0; k < image.rows.count; ++k) {
      detections[first + static_cast<size_t>(k)].segmentation =
          eval::rle_encode(original[k].data_ptr<uint8_t>(), image.geometry.original_height,
                           image.geometry.original_width);
    }
  }
  // The reference's tp_m: mask IoU with the GT masks at the predictions' resolution.
  const LetterboxedTruth& gt = truth(image.position);
  const auto gt_masks =
      truth_masks(batch_masks_, overlap_masks_, image.position, first_label_row(image.position),
                  static_cast<int64_t>(gt.classes.size()), masks.size(1), masks.size(2));
  mask_metric_.add_image_overlaps(mask_overlaps(gt_masks, masks), scores(image.rows),
                                  classes(image.rows), gt.classes);
}

void SegmentScorer::finish(const data::CocoFile* coco_truth,
                           const std::vector<eval::Detection>& detections,
                           ValidationResult& result) {
  BoxScorer::finish(coco_truth, detections, result);
  result.second_name = "mask";
  result.second_coco_name = "mask";
  result.second_metric = mask_metric_.compute();
  if (!coco_truth || !setup_.keep_detections) return;  // masks are RLE only when kept
  eval::CocoEvalOptions segm;
  segm.iou_type = eval::IouType::kSegm;
  try {
    result.second_coco = eval::evaluate_coco(*coco_truth, detections, segm);
  } catch (const core::InputError& e) {  // e.g. ground truth without segmentation
    spdlog::warn("COCO mask evaluation skipped: {}", e.what());
  }
}

}  // namespace trainer::engine
