// Fuzz target: YOLO label text, detection and keypoint layouts.
//
// Why: label files are the most hand-edited input; the parser must never crash and what it keeps
// must obey its own rules (classes in 0..nc-1, boxes inside [0, 1]). Input: one byte choosing the
// layout, one byte for nc, then the label text.
#include <array>

#include "data/yolo_labels.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // Detection, then pose (17 keypoints x 3 and x 2) and one small keypoint layout.
  constexpr std::array<int, 4> kKptValues = {0, 51, 34, 3};
  const int kpt_values = kKptValues[data[0] % kKptValues.size()];
  const int nc = 1 + data[1] % 100;
  const std::string text = trainer::fuzz::as_text(data + 2, size - 2);
  const auto parsed = trainer::data::parse_yolo_labels(text, "fuzz.txt", nc, kpt_values);
  FUZZ_CHECK(parsed.classes.size() == parsed.boxes.size());
  if (parsed.error) FUZZ_CHECK(parsed.classes.empty());
  for (size_t i = 0; i < parsed.boxes.size(); ++i) {
    FUZZ_CHECK(parsed.classes[i] >= 0 && parsed.classes[i] < nc);
    for (float v : parsed.boxes[i]) FUZZ_CHECK(v >= 0.0f && v <= 1.0f);
  }
  return 0;
}
