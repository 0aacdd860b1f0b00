// Detections as bytes (eval/detection_bytes.h): every field back bit for bit, appended after what
// is there, and bytes cut short refused.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "eval/detection_bytes.h"
#include "eval/detection_checks.h"

using namespace trainer;

TEST_CASE("detections: written and read back field by field, appended, bit for bit") {
  eval::Detection box;
  box.image_id = 9;
  box.category_id = 90;
  box.bbox_xywh = {0.1, 1.0 / 3.0, 1e-300, std::nextafter(2.0, 3.0)};
  box.score = 0.000123456789;
  box.file_name = "000000000009.jpg";
  box.class_index = 79;
  eval::Detection rich = box;
  rich.keypoints = {1.5, 2.25, 0.75};
  rich.rbox = {10, 20, 5, 3, 0.7853981633974483};
  rich.poly = {1, 2, 3, 4, 5, 6, 7, 8};
  rich.segmentation = eval::Rle{4, 3, {0, 5, 7}};
  rich.area_from_mask = true;
  rich.file_name = "";
  core::ByteWriter out;
  eval::write_detections(out, {box, rich});
  const std::string bytes = out.take();
  std::vector<eval::Detection> back(1);  // something already there stays first
  core::ByteReader in(bytes);
  eval::read_detections(in, back);
  CHECK(in.done());
  REQUIRE(back.size() == 3);
  for (size_t k = 1; k < 3; ++k) {
    CAPTURE(k);
    test::check_same_detection(back[k], k == 1 ? box : rich);
  }
  CHECK(back[2].segmentation->height == 4);  // the fields a default Detection leaves empty
  CHECK(back[2].segmentation->width == 3);
  CHECK(back[2].area_from_mask);
  const std::string cut = bytes.substr(0, bytes.size() - 1);
  core::ByteReader short_in(cut);
  std::vector<eval::Detection> none;
  CHECK_THROWS_AS(eval::read_detections(short_in, none), std::runtime_error);
}
