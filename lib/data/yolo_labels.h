// Parsing one YOLO label file (`class cx cy w h` per line) with the reference's checks.
//
// Why: label files are written by hand and by converters, so every way a line can be wrong gets
// a message with the file and line. As the reference does: a line with the wrong number of values,
// a non-numeric value, a negative class or a class >= nc, or a coordinate outside [-0.01, 1] makes
// the whole image unusable (skipped, counted as corrupt); slightly negative coordinates
// (>= -0.01) are clipped to 0; duplicate rows are removed (counted). A polygon line
// (`class x1 y1 x2 y2 x3 y3 ...`, odd length >= 7) becomes its enclosing box. With keypoints
// (`kpt_values` = K * dims) a line is `class cx cy w h` plus those values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "data/image_labels.h"

namespace trainer::data {

struct ParsedLabels {
  std::vector<int> classes;
  std::vector<NormBox> boxes;
  int duplicates = 0;
  std::optional<std::string> error;  // set when the image must be skipped ("file:line: why")
};

ParsedLabels parse_yolo_labels(const std::string& text, const std::string& file, int nc,
                               int kpt_values = 0);

}  // namespace trainer::data
