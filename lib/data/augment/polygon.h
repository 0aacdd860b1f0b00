// Polygons of a training sample (OBB corners, segmentation outlines) and the reference's rules for
// them: the visible box of a polygon (segment2box), the preserve_obb clip (Instances.clip) and the
// rotated box of a polygon (xyxyxyxy2xywhr); reference-tasks.md 3.3.
//
// Why here: every geometric augmentation moves polygons point by point; what the box of a moved
// polygon is, and what happens to a polygon that crosses the image border, are rules of their own
// that the mosaic, the warp and the final format share.
//
// Points, not resampled outlines: the reference resamples each polygon to 100 points before the
// transforms. Every transform here is projective (lines stay lines) and the OBB clip works on the
// convex hull, so the polygon's own vertices give the same hull, visible part and minimum-area
// rectangle as the resampled outline, with 25x fewer points to move.
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

// The canonical rotated box of a polygon's points in pixels (geometry::min_area_box).
geometry::RotatedBox polygon_rotated_box(const Polygon& polygon);

}  // namespace trainer::data::augment
