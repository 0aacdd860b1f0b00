// Parsing one YOLO label file (`class cx cy w h` per line) with the reference's checks.
//
// Why: label files are written by hand and by converters, so every way a line can be wrong gets
// a message with the file and line. As the reference does: a line with the wrong number of values,
// a non-numeric value, a negative class or a class >= nc, or a coordinate outside [-0.01, 1.01]
// (8.4.190's tolerance) makes the whole image unusable (skipped, counted as corrupt); slightly
// negative box coordinates are clipped to 0; duplicate rows are removed (counted). A polygon line
// (`class x1 y1 x2 y2 x3 y3 ...`, odd length >= 7) becomes its enclosing box. With keypoints
// (`kpt_shape` [K, dims]) a line is `class cx cy w h` plus K points of `x y` or `x y v`: points
// obey the same range, a visibility must be 0, 1 or 2 (ours; the reference accepts any value), and
// with 2 values per point v = 0 where x or y is negative, else 1 (the reference's rule).
// With `keep_polygons` (the OBB task: DOTA's `class x1 y1 x2 y2 x3 y3 x4 y4`; segmentation) every
// line must be a polygon of at least 3 points and its points are kept beside its box; a box line
// there is an error naming the file and line (the reference reads its 4 numbers as 2 points).
// Box rows and polygon rows mixed in one detection file are each read as what they are, with a
// warning naming the lines (the reference reads them all as polygons, a box row as 2 points). A
// UTF-8 byte-order mark at the start is dropped; hexadecimal floats ("0x1p-1") are refused.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "data/image_labels.h"

namespace trainer::data {

// A dataset's `kpt_shape`: keypoints per box and values per keypoint (2: x y, 3: x y v).
struct KeypointShape {
  int count = 0;
  int dims = 0;
};

struct ParsedLabels {
  std::vector<int> classes;
  std::vector<NormBox> boxes;
  std::vector<float> keypoints;  // K x (x, y, v) per box, box-major; empty without kpt_shape
  std::vector<std::vector<float>> segments;  // keep_polygons: x1 y1 x2 y2 ... per box, normalised
  int duplicates = 0;
  std::optional<std::string> error;    // set when the image must be skipped ("file:line: why")
  std::optional<std::string> warning;  // kept, but worth a line ("file:line: what was done")
};

ParsedLabels parse_yolo_labels(const std::string& text, const std::string& file, int nc,
                               KeypointShape kpt = {}, bool keep_polygons = false);

}  // namespace trainer::data
