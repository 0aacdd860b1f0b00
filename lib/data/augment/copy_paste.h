// Copy-paste (the reference's CopyPaste, reference-tasks.md 4.3): objects pasted with their
// outlines into a sample whose instances carry polygons (segmentation, OBB).
//   flip: the candidates are horizontally mirrored copies of the sample's own objects; it runs on
//     every sample between the mosaic and the warp, with no probability gate.
//   mixup: the candidates are another sample's objects (that sample through its own mosaic and
//     warp); it runs after the warp with probability `fraction`.
// Either way a candidate is eligible when its box covers less than 30% of every existing box
// (intersection over the existing box's area); the eligible ones are taken by increasing largest
// such overlap, round(fraction x eligible) of them; their outlines (points truncated to
// integers) are filled into a mask through which the source's pixels are copied, and their
// class, box and polygon are appended.
//
// Why its own unit: what is eligible and which pixels move are the rules worth checking by hand;
// the pipeline only decides where it runs.
#pragma once

#include "data/augment/sample.h"

namespace trainer::data::augment {

// Pastes objects of `source` (instances in pixels of an image the size of `sample`'s, with
// polygons) and its pixels `source_image` into `sample`. Returns how many were pasted; nothing
// happens when `sample` has no polygons or fraction is 0.
int paste_objects(Sample& sample, const Sample& source, const cv::Mat& source_image,
                  double fraction);

// flip mode: the source is `sample` mirrored left-right (objects and pixels).
int copy_paste_flip(Sample& sample, double fraction);

}  // namespace trainer::data::augment
