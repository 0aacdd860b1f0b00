// The reference's DOTA submission files for OBB predictions (its OBBValidator.eval_json):
// predictions_txt/Task1_<class>.txt with one line per detection, "<image stem> <score> x1 y1 ...
// x4 y4" (original pixels), and predictions_merged_txt/ where tiles named
// <image>__<size>__<x>___<y> are shifted back into their image and merged per image by a
// class-aware Fast-NMS on ProbIoU at 0.3.
//
// Why: DOTA-style datasets are evaluated by the benchmark's own server from these files; users of
// the reference expect them beside predictions.json.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "eval/coco_results.h"

namespace trainer::engine {

// One detection's place in the DOTA files: the image's file stem and its class index.
struct DotaDetection {
  std::string image_stem;
  int cls = 0;
  double score = 0;
  std::vector<double> rbox;  // [cx, cy, w, h, angle], original pixels
};

// The "<x>___<y>" offset of a tile stem ("P0001__1024__824___0" -> image "P0001", (824, 0)); the
// stem itself with (0, 0) for an untiled image.
struct TileOrigin {
  std::string image;
  double x = 0, y = 0;
};
TileOrigin tile_origin(const std::string& stem);

// The Task1 file name of each class 0 .. max(names.size(), classes) - 1 (a class without a name
// is its number): "Task1_<name>.txt" with spaces turned into dashes (the reference's rule) and
// every character unsafe in a file name ('/', '\\', control characters, : * ? " < > |) into '_',
// cut to 200 bytes. A name that needed no change keeps its file; a changed one that would meet
// another class's file takes the first free <name>_2, <name>_3, ... in class order ("a/b" and
// "a_b": Task1_a_b_2.txt and Task1_a_b.txt).
std::vector<std::string> dota_class_files(const std::vector<std::string>& names, size_t classes);

// Writes both folders under `dir`, each file atomically (Task1 files of an earlier run there are
// replaced or removed).
void write_dota_predictions(const std::vector<DotaDetection>& detections,
                            const std::vector<std::string>& names,
                            const std::filesystem::path& dir);

}  // namespace trainer::engine
