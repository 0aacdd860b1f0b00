// What `trainer predict` writes for one image whatever the task: the console summary, the
// annotation line width, the class label and the COCO image id, in the reference predictor's
// formats.
//
// Why apart from the predictor: pure functions of one image's predictions, tested by hand. What
// a task draws and writes (boxes, keypoints, masks, rotated boxes) is its TaskOutput's
// (task_output.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "predict/predictor.h"

namespace trainer::predict {

// The reference's line width: line_width, else max(round((h + w + 3) / 2 * 0.003), 2).
int annotation_line_width(int height, int width, int line_width);

// names[cls], or the class number when `names` has no entry for it.
std::string class_name(const std::vector<std::string>& names, int cls);

// The reference's Results.verbose(): "2 persons, 1 bus, " (classes in id order, plural with 's'),
// "(no detections), " for none.
std::string summary(const ImagePrediction& prediction, const std::vector<std::string>& names);

// The reference's image_id: the file stem when it is a number, else `fallback`.
int64_t image_id_for(const std::filesystem::path& file, int64_t fallback);

}  // namespace trainer::predict
