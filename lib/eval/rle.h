// COCO run-length encoding of binary masks, as pycocotools' maskApi computes it: the runs, the
// compressed string, area, bounding box, polygon rasterisation, union and IoU.
//
// Why: segmentation ground truth (polygons, crowd RLE) and mask results are scored by pycocotools
// on exactly these masks; a polygon rasterised one pixel differently, or an IoU taken over the
// crowd's area instead of the detection's, moves AP. Every operation here gives the same counts,
// bytes and doubles as maskApi.c (checked against pycocotools in tests/eval), and the IoU works on
// the runs, never on dense masks, so a mask costs its boundary, not its pixels.
//
// The layout: `counts` are run lengths over the mask in column-major order (x outer, y inner),
// alternating background / foreground and starting with background (a mask whose first pixel is
// foreground starts with a 0). The counts of a well-formed RLE add up to height x width.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainer::eval {

struct Rle {
  int height = 0;
  int width = 0;
  std::vector<uint32_t> counts{};  // column-major runs, background first
};

// pycocotools.mask.encode of a row-major height x width mask (any non-zero byte is foreground; the
// transpose to column-major is done here).
Rle rle_encode(const uint8_t* mask, int height, int width);

// pycocotools.mask.decode: the row-major height x width mask, 0 or 1. Throws std::invalid_argument
// when the counts do not add up to height x width.
std::vector<uint8_t> rle_decode(const Rle& rle);

// maskApi's rleToString: the compressed "counts" string of the COCO json (from the fourth count on,
// each is stored as its difference to the count two before; 5 bits a character, 0x20 marks a
// continuation, the last group's 0x10 bit is the sign; +48 makes it printable, '0'..'o').
std::string rle_to_string(const Rle& rle);

// maskApi's rleFrString for well-formed strings. Throws std::invalid_argument for a character
// outside '0'..'o', a string that ends inside a number, or a count that is negative or beyond 32
// bits (where pycocotools would silently wrap). The counts are not checked against the size.
Rle rle_from_string(std::string_view counts, int height, int width);

// Sum of the counts (height x width for a well-formed RLE).
uint64_t rle_pixels(const Rle& rle);

// pycocotools.mask.area: the foreground pixel count.
uint64_t rle_area(const Rle& rle);

// pycocotools.mask.toBbox (maskApi's rleToBbox): [x, y, w, h] of the foreground pixels, whole
// pixels; [0, 0, 0, 0] for fewer than two counts. Its unsigned arithmetic is kept, so an RLE with
// runs but no foreground pixel gets maskApi's wrapped sizes, not zeros.
std::array<double, 4> rle_to_bbox(const Rle& rle);

// maskApi's rleFrPoly: the polygon [x1, y1, x2, y2, ...] (`num_points` points; pixel coordinates,
// the centre of the top-left pixel at 0.5) rasterised into a height x width mask: the polygon is
// scaled by 5 and rounded to integers, its edges are walked point by point, and a pixel is inside
// where the walk crosses its column's centre line below it an odd number of times.
Rle rle_from_polygon(const double* xy, size_t num_points, int height, int width);
Rle rle_from_polygon(const std::vector<double>& xy, int height, int width);  // xy.size() / 2 points

// maskApi's rleFrBbox: the box [x, y, w, h] as the polygon of its 4 corners.
Rle rle_from_bbox(const std::array<double, 4>& xywh, int height, int width);

// maskApi's rleMerge over `rles` (pointers, so callers need not copy): the union (or with
// `intersect` the intersection). No RLE gives an empty 0 x 0 RLE, one gives a copy, and masks of
// different sizes give an empty 0 x 0 RLE, as maskApi does.
Rle rle_merge(const std::vector<const Rle*>& rles, bool intersect = false);
Rle rle_merge(const std::vector<Rle>& rles, bool intersect = false);

// maskApi's rleIou for one (detection, ground truth) pair, given both masks' rle_to_bbox boxes:
// 0 when the boxes do not overlap (maskApi's box prefilter; the masks cannot overlap either),
// -1 when the masks differ in size, else the intersection over the union, or over the
// detection's own area when the ground truth is a crowd region. Works on the runs.
double rle_iou(const Rle& dt, const std::array<double, 4>& dt_box, const Rle& gt,
               const std::array<double, 4>& gt_box, bool gt_crowd);

// pycocotools.mask.iou(dt, gt, iscrowd): the dt.size() x gt.size() matrix, row-major [d][g].
std::vector<double> rle_iou(const std::vector<Rle>& dt, const std::vector<Rle>& gt,
                            const std::vector<uint8_t>& gt_crowd);

}  // namespace trainer::eval
