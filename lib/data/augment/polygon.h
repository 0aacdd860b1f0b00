// Polygons of a training sample (OBB corners, segmentation outlines) and the reference's rules for
// them: the visible box of a polygon (segment2box), the preserve_obb clip (Instances.clip) and the
// rotated box of a polygon (xyxyxyxy2xywhr); reference-tasks.md 3.3.
//
// Why here: every geometric augmentation moves polygons point by point; what the box of a moved
// polygon is, and what happens to a polygon that crosses the image border, are rules of their own
// that the mosaic, the warp and the final format share.
//
// Oriented boxes move as their own points: the reference resamples each to 100 points before the
// transforms, but every transform here is projective (lines stay lines) and the OBB clip works on
// the convex hull, so the 4 corners give the same hull, visible part and minimum-area rectangle,
// with 25x fewer points to move. Segmentation outlines are resampled as the reference does
// (resample_outline): they are clamped point by point at borders, and how many points an edge has
// decides the clamped shape.
#pragma once

#include <opencv2/core/types.hpp>

#include <vector>

#include "data/augment/sample.h"
#include "geometry/rotated_box.h"

namespace trainer::data::augment {

using Polygon = std::vector<cv::Point2f>;

// The box of the part of `polygon` inside [0, width] x [0, height] (the reference's segment2box):
// the polygon's bounds when it is inside, zeros when its bounds are outside; otherwise the bounds
// of its vertices inside, its edges' crossings of the border lines that lie on the border, and the
// image corners inside it.
PixelBox visible_box(const Polygon& polygon, float width, float height);

// The reference's preserve_obb clip of one polygon that is not inside [0, width] x [0, height]:
// the visible part (its convex hull intersected with the image) becomes the rectangle, in the
// orientation of the polygon's own minimum-area rectangle, that bounds it; `box` becomes the
// visible part's bounds. A polygon with no visible area becomes 4 points at 0 and a zero box.
// Returns false in that case. A polygon inside is left as it is (true).
bool clip_oriented_polygon(Polygon& polygon, PixelBox& box, float width, float height);

// Clips every polygon of `sample` to [0, width] x [0, height]: oriented samples with
// clip_oriented_polygon (boxes follow), others by clamping each point (boxes unchanged).
void clip_polygons(Sample& sample, float width, float height);

// The reference's resample_segments for one outline of `n` coordinates pairs in `xy` (x1 y1 x2
// y2 ...): the outline is closed (its first point appended) and, when it has fewer than `count`
// points, `count` - (points + 1) positions spread evenly over its vertex index (not its length)
// are interpolated between the vertices, which stay in the result; with as many or more points
// it is sampled at `count` even positions. Computed in double precision as NumPy's interp,
// returned as float. An outline of exactly `count` points is returned unchanged.
std::vector<float> resample_outline(const std::vector<float>& xy, size_t count);

// The point count a sample's outlines are resampled to: 1000, or one more than the longest
// outline's points when that is above 1000 (the reference's update_labels_info).
size_t outline_resample_count(const std::vector<std::vector<float>>& outlines);

// The canonical rotated box of a polygon's points in pixels (geometry::min_area_box).
geometry::RotatedBox polygon_rotated_box(const Polygon& polygon);

}  // namespace trainer::data::augment
