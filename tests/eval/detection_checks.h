// Test helper: two detections (COCO results entries) equal in every field, bit for bit, each
// field its own check so a failure names it.
#pragma once

#include <doctest/doctest.h>

#include "eval/coco_results.h"

namespace trainer::test {

inline void check_same_detection(const eval::Detection& got, const eval::Detection& want) {
  CHECK(got.image_id == want.image_id);
  CHECK(got.category_id == want.category_id);
  CHECK(got.bbox_xywh == want.bbox_xywh);
  CHECK(got.score == want.score);
  CHECK(got.keypoints == want.keypoints);
  CHECK(got.rbox == want.rbox);
  CHECK(got.poly == want.poly);
  REQUIRE(got.segmentation.has_value() == want.segmentation.has_value());
  if (want.segmentation) {
    CHECK(got.segmentation->height == want.segmentation->height);
    CHECK(got.segmentation->width == want.segmentation->width);
    CHECK(got.segmentation->counts == want.segmentation->counts);
  }
  CHECK(got.area_from_mask == want.area_from_mask);
  CHECK(got.file_name == want.file_name);
  CHECK(got.class_index == want.class_index);
}

}  // namespace trainer::test
