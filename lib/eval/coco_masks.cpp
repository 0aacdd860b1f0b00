// annToRLE's rules; see coco_masks.h.
#include "eval/coco_masks.h"

#include <stdexcept>
#include <string>

namespace trainer::eval {

namespace {

Rle to_rle(const data::CocoSegmentation& segmentation, int image_height, int image_width) {
  if (segmentation.rle) {
    const data::CocoRle& r = *segmentation.rle;
    Rle out = r.compressed.empty() ? Rle{r.height, r.width, r.counts}
                                   : rle_from_string(r.compressed, r.height, r.width);
    const uint64_t pixels = static_cast<uint64_t>(r.height) * static_cast<uint64_t>(r.width);
    if (out.counts.empty() || rle_pixels(out) != pixels) {
      throw std::invalid_argument("RLE counts cover " + std::to_string(rle_pixels(out)) +
                                  " pixels, not " + std::to_string(r.height) + "x" +
                                  std::to_string(r.width));
    }
    return out;
  }
  const auto& polygons = segmentation.polygons;
  if (polygons.empty()) throw std::invalid_argument("is empty (no polygon or RLE)");
  std::vector<Rle> parts;
  parts.reserve(polygons.size());
  const bool boxes = polygons.front().size() == 4;  // frPyObjects: a list of [x, y, w, h]
  for (const std::vector<double>& polygon : polygons) {
    if (boxes) {
      if (polygon.size() != 4) {
        throw std::invalid_argument(
            "the first polygon has 4 values (pycocotools reads the list as boxes [x, y, w, h]) "
            "but another has " +
            std::to_string(polygon.size()));
      }
      parts.push_back(rle_from_bbox({polygon[0], polygon[1], polygon[2], polygon[3]}, image_height,
                                    image_width));
    } else {
      parts.push_back(rle_from_polygon(polygon, image_height, image_width));
    }
  }
  if (parts.size() == 1) return std::move(parts.front());
  return rle_merge(parts);
}

}  // namespace

Rle coco_segmentation_rle(const data::CocoSegmentation& segmentation, int image_height,
                          int image_width) {
  try {
    return to_rle(segmentation, image_height, image_width);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("\"segmentation\" ") + e.what());
  }
}

}  // namespace trainer::eval
