// The mask of a COCO "segmentation" (polygons or RLE), as pycocotools' COCO.annToRLE makes it for
// segmentation evaluation, ground truth and results alike.
//
// Why its own unit: which mask a segmentation stands for is a protocol rule, not an RLE
// operation: several polygons are one object (their union), an uncompressed RLE keeps its own
// size, and a first polygon of 4 values makes pycocotools' frPyObjects read every polygon as a box.
#pragma once

#include "data/coco_json.h"
#include "eval/rle.h"

namespace trainer::eval {

// pycocotools' annToRLE for an image of image_height x image_width: polygons rasterised
// (rle_from_polygon) and merged into their union; when the first polygon has exactly 4 values,
// every polygon is read as a box [x, y, w, h] (rle_from_bbox), as frPyObjects does; an RLE as
// given (its own size; a compressed string decoded). Throws std::invalid_argument for an empty
// segmentation, 4-value polygons mixed with longer ones when the first has 4 values (pycocotools
// fails there), a compressed string that does not decode, or counts that do not cover the RLE's
// height x width.
Rle coco_segmentation_rle(const data::CocoSegmentation& segmentation, int image_height,
                          int image_width);

}  // namespace trainer::eval
