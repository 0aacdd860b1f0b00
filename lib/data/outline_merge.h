// One outline from an object's several COCO polygons (an object split by an occluder), as the
// reference's COCO converter joins them (merge_multi_segment): consecutive polygons are linked at
// their closest pair of vertices, and the joined outline walks every polygon, out along the links
// and back, so that a single polygon fill covers all parts (the links are zero-width).
//
// Why: segmentation training fills one outline per object; reading COCO json directly must give
// the outlines the reference trains on after converting the same file to txt labels.
#pragma once

#include <vector>

namespace trainer::data {

// polygons: each [x1, y1, x2, y2, ...] (at least one point). Returns the joined outline, in the
// same units. One polygon is returned as it is.
std::vector<double> merge_outlines(const std::vector<std::vector<double>>& polygons);

}  // namespace trainer::data
