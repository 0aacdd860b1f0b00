// Fuzz target: the COCO results json reader, against a small fixed ground truth.
//
// Why: results files come from other tools as well as from `trainer val`; the reader must accept
// them or throw core::InputError naming the entry. What it accepts, written back the way
// `trainer val` writes predictions.json, must read again.
#include "core/error.h"
#include "data/coco_json.h"
#include "eval/coco_results.h"
#include "fuzz/fuzz_support.h"

namespace {

const trainer::data::CocoFile& ground_truth() {
  static const trainer::data::CocoFile gt = trainer::data::parse_coco_json(R"({
    "images": [{"id": 1, "file_name": "a.jpg", "width": 640, "height": 480},
               {"id": 2, "file_name": "b.jpg", "width": 320, "height": 320}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 20, 30, 40],
                     "area": 1200, "iscrowd": 0}],
    "categories": [{"id": 1, "name": "person"}, {"id": 3, "name": "car"}]})",
                                                                           "gt.json");
  return gt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<trainer::eval::Detection> detections;
  try {
    detections = trainer::eval::parse_coco_results(trainer::fuzz::as_text(data, size), "fuzz.json",
                                                   ground_truth());
  } catch (const trainer::core::InputError& e) {
    trainer::fuzz::expected_error(e);
    return 0;
  }
  const std::string written = trainer::eval::format_coco_results(detections);
  const auto again = trainer::eval::parse_coco_results(written, "written.json", ground_truth());
  FUZZ_CHECK(again.size() == detections.size());
  return 0;
}
