// The postprocess rows read by name: the fixed six columns, OBB's angle, pose's keypoints; and
// the layout each task's model gives its rows.
#include <doctest/doctest.h>

#include "model/detection_rows.h"
#include "model/yolo_model.h"

using namespace trainer;

TEST_CASE("detection rows: width 6 + extra, box, score, class, keypoints and angle by position") {
  // Two pose rows with K = 2, dims 3: 6 + 6 columns each.
  const model::RowLayout pose{6, model::KeypointShape{2, 3}, false};
  CHECK(pose.width() == 12);
  const float data[24] = {1, 2, 3, 4, 0.9f, 7, 10, 11, 0.5f, 12, 13, 0.25f,  //
                          5, 6, 7, 8, 0.8f, 2, 20, 21, 0.4f, 22, 23, 0.75f};
  const model::HostRows rows{data, 2, pose};
  CHECK(rows[0].box() == std::array<float, 4>{1, 2, 3, 4});
  CHECK(rows[0].score() == doctest::Approx(0.9f));
  CHECK(rows[0].cls() == 7);
  CHECK(rows[1].cls() == 2);
  CHECK(rows[1].keypoint(0)[0] == 20);
  CHECK(rows[1].keypoint(1)[1] == 23);
  CHECK(rows[1].keypoint(1)[2] == doctest::Approx(0.75f));
  CHECK(rows[1].extra_end() - rows[1].extra_begin() == 6);
  // OBB: [cx, cy, w, h, score, class, angle].
  const model::RowLayout obb{1, model::kNoKeypoints, true};
  const float rotated[7] = {50, 40, 20, 10, 0.6f, 3, 0.5f};
  CHECK(model::HostRows{rotated, 1, obb}[0].angle() == doctest::Approx(0.5f));
  CHECK(model::RowLayout{}.width() == model::kRowFixedColumns);
}

TEST_CASE(
    "detection rows: each task's model says its row layout (detect 6, pose 6 + K x dims, ...)") {
  using model::ModelFamily;
  const auto detect = model::build_tiny_yolo_model(ModelFamily::kYolo26, 3);
  CHECK(detect->row_layout().width() == 6);
  CHECK_FALSE(detect->row_layout().oriented);
  const auto pose = model::build_tiny_yolo_model(ModelFamily::kYolo26, 1, core::Task::kPose,
                                                 model::KeypointShape{7, 3});
  CHECK(pose->row_layout().width() == 6 + 7 * 3);
  CHECK(pose->row_layout().keypoints.count == 7);
  CHECK(pose->row_layout().keypoints.dims == 3);
  const auto obb = model::build_tiny_yolo_model(ModelFamily::kYolo11, 2, core::Task::kObb);
  CHECK(obb->row_layout().width() == 7);  // the angle
  CHECK(obb->row_layout().oriented);
  const auto seg = model::build_tiny_yolo_model(ModelFamily::kYolo26, 2, core::Task::kSegment);
  CHECK(seg->row_layout().width() == 6 + 32);  // nm = 32 mask coefficients
  CHECK_FALSE(seg->row_layout().oriented);
}
