// One row of the postprocess's output, read by name: validation and predict decode the same rows.
//
// Why: the row layout ([x1, y1, x2, y2, score, class] then the head's extra columns: OBB's angle
// after [cx, cy, w, h, ...], pose's K x dims keypoint values, segmentation's nm mask coefficients)
// was indexed by hand in the validator and again in predict, its fixed width written out each time.
#pragma once

#include <array>
#include <cstdint>

#include "model/keypoint_shape.h"

namespace trainer::model {

// The columns every row starts with: the box (4), the score and the class.
inline constexpr int64_t kRowFixedColumns = 6;

// What a model's rows hold after the fixed columns.
struct RowLayout {
  int64_t extra = 0;                       // the head's extra columns (DetectHead::extra_channels)
  KeypointShape keypoints = kNoKeypoints;  // pose: the extra columns are K x dims keypoint values
  bool oriented = false;  // OBB: the box is [cx, cy, w, h], the first extra the angle

  constexpr int64_t width() const { return kRowFixedColumns + extra; }
};

// One row in host memory (float, row-major), read through its layout.
class RowView {
 public:
  RowView(const float* row, const RowLayout& layout) : row_(row), layout_(&layout) {}

  // xyxy in input pixels (OBB: cx, cy, w, h).
  std::array<float, 4> box() const { return {row_[0], row_[1], row_[2], row_[3]}; }
  float score() const { return row_[4]; }
  int cls() const { return static_cast<int>(row_[5]); }
  float angle() const { return row_[kRowFixedColumns]; }  // OBB only
  // The extra columns (pose: every keypoint value; segmentation: the mask coefficients).
  const float* extra_begin() const { return row_ + kRowFixedColumns; }
  const float* extra_end() const { return row_ + layout_->width(); }
  // Keypoint `p`'s x, y (and its visibility score when dims == 3), input pixels.
  const float* keypoint(int64_t p) const {
    return row_ + kRowFixedColumns + p * layout_->keypoints.dims;
  }
  const RowLayout& layout() const { return *layout_; }

 private:
  const float* row_;
  const RowLayout* layout_;
};

// `count` rows of one image in host memory.
struct HostRows {
  const float* data = nullptr;
  int64_t count = 0;
  RowLayout layout;

  RowView operator[](int64_t k) const { return {data + k * layout.width(), layout}; }
};

}  // namespace trainer::model
