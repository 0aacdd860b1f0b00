// Fuzz target: YOLO label text, detection and keypoint layouts.
//
// Why: label files are the most hand-edited input; the parser must never crash and what it keeps
// must obey its own rules (classes in 0..nc-1, box values in [0, 1.01], K (x, y, v) triples per
// box with v in {0, 1, 2}). Input: one byte choosing the layout, one byte for nc, then the text.
#include <array>

#include "data/yolo_labels.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // Detection, then pose (17 keypoints x 3 and x 2) and one small keypoint layout.
  constexpr std::array<trainer::data::KeypointShape, 4> kShapes = {
      {{0, 0}, {17, 3}, {17, 2}, {1, 3}}};
  const trainer::data::KeypointShape shape = kShapes[data[0] % kShapes.size()];
  const int nc = 1 + data[1] % 100;
  const std::string text = trainer::fuzz::as_text(data + 2, size - 2);
  const auto parsed = trainer::data::parse_yolo_labels(text, "fuzz.txt", nc, shape);
  FUZZ_CHECK(parsed.classes.size() == parsed.boxes.size());
  FUZZ_CHECK(parsed.keypoints.size() == parsed.boxes.size() * static_cast<size_t>(shape.count) * 3);
  if (parsed.error) FUZZ_CHECK(parsed.classes.empty() && parsed.keypoints.empty());
  for (size_t i = 0; i < parsed.boxes.size(); ++i) {
    FUZZ_CHECK(parsed.classes[i] >= 0 && parsed.classes[i] < nc);
    for (float v : parsed.boxes[i]) FUZZ_CHECK(v >= 0.0f && v <= 1.01f);
  }
  for (size_t i = 0; i + 2 < parsed.keypoints.size(); i += 3) {
    FUZZ_CHECK(parsed.keypoints[i] >= -0.01f && parsed.keypoints[i] <= 1.01f);
    FUZZ_CHECK(parsed.keypoints[i + 1] >= -0.01f && parsed.keypoints[i + 1] <= 1.01f);
    const float v = parsed.keypoints[i + 2];
    FUZZ_CHECK(v == 0.0f || v == 1.0f || v == 2.0f);
  }
  return 0;
}
