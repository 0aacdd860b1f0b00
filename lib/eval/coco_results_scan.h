// A fast reader for the common shape of one COCO results entry: {"image_id": int, "category_id":
// int, "bbox": [4 numbers] or [], "score": number, "segmentation": {"size": [h, w], "counts":
// "<compressed>"}}, other keys skipped.
//
// Why: a mask results file is half a million such entries, mostly RLE strings, and a general json
// document costs several times more to build than the entries are worth. This scanner reads only
// that shape and says no to anything else (keypoints, rotated boxes, polygons, uncompressed
// counts, ids written as floats, NaN tokens, \u escapes, non-ASCII strings, malformed json); the
// caller then parses the entry with the general reader, which also gives the errors. So the fast
// path never decides what is an error, only what is plainly well-formed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace trainer::eval {

struct ScannedEntry {
  int64_t image_id = 0;
  int64_t category_id = 0;
  double score = 0;
  bool has_score = false;
  int bbox_values = -1;  // -1: no "bbox"; 0: "bbox": []; 4: `bbox` holds it
  std::array<double, 4> bbox{};
  bool has_segmentation = false;  // an RLE object with a compressed string
  int64_t height = 0;
  int64_t width = 0;
  std::string counts{};  // the compressed string, json escapes resolved
};

// Reads `entry` (one value of the results list) into `out`; false when it is not of the shape
// above, or not well-formed json.
bool scan_results_entry(std::string_view entry, ScannedEntry* out);

}  // namespace trainer::eval
