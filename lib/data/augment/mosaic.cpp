// Mosaic placement and assembly; see mosaic.h.
// Tested by tests/data/test_augment.cpp: mosaic placement for fixed centre, label
//   offsets/clip/drop, assembled-only-where-read equals full.
#include "data/augment/mosaic.h"

#include <algorithm>

#include "data/augment/polygon.h"
#include "data/stage_profile.h"

namespace trainer::data::augment {

MosaicPlacement mosaic_placement(int quadrant, int xc, int yc, int h, int w, int s) {
  MosaicPlacement p{};
  switch (quadrant) {
    case 0:  // top left
      p.x1a = std::max(xc - w, 0), p.y1a = std::max(yc - h, 0), p.x2a = xc, p.y2a = yc;
      p.x1b = w - (p.x2a - p.x1a), p.y1b = h - (p.y2a - p.y1a), p.x2b = w, p.y2b = h;
      break;
    case 1:  // top right
      p.x1a = xc, p.y1a = std::max(yc - h, 0), p.x2a = std::min(xc + w, 2 * s), p.y2a = yc;
      p.x1b = 0, p.y1b = h - (p.y2a - p.y1a), p.x2b = std::min(w, p.x2a - p.x1a), p.y2b = h;
      break;
    case 2:  // bottom left
      p.x1a = std::max(xc - w, 0), p.y1a = yc, p.x2a = xc, p.y2a = std::min(2 * s, yc + h);
      p.x1b = w - (p.x2a - p.x1a), p.y1b = 0, p.x2b = w, p.y2b = std::min(p.y2a - p.y1a, h);
      break;
    default:  // bottom right
      p.x1a = xc, p.y1a = yc, p.x2a = std::min(xc + w, 2 * s), p.y2a = std::min(2 * s, yc + h);
      p.x1b = 0, p.y1b = 0, p.x2b = std::min(w, p.x2a - p.x1a), p.y2b = std::min(p.y2a - p.y1a, h);
      break;
  }
  p.padw = p.x1a - p.x1b;
  p.padh = p.y1a - p.y1b;
  return p;
}

Sample mosaic4(const std::array<const Sample*, 4>& parts, int s, int xc, int yc) {
  cv::Mat canvas;
  return mosaic4_into(parts, s, xc, yc, cv::Rect(0, 0, 2 * s, 2 * s), canvas);
}

Sample mosaic4_into(const std::array<const Sample*, 4>& parts, int s, int xc, int yc,
                    const cv::Rect& region, cv::Mat& canvas) {
  StageScope scope(Stage::kMosaic);
  Sample out;
  canvas.create(2 * s, 2 * s, CV_8UC3);
  const cv::Rect area = region & cv::Rect(0, 0, 2 * s, 2 * s);
  out.image = canvas;
  out.keypoints_per_box = parts[0]->keypoints_per_box;
  out.oriented = parts[0]->oriented;
  const cv::Scalar fill(114, 114, 114);
  for (int q = 0; q < 4; ++q) {
    const Sample& part = *parts[q];
    const MosaicPlacement p = mosaic_placement(q, xc, yc, part.height(), part.width(), s);
    // The quadrant is the image's part where it lands and fill around it (each pixel written
    // once): up to four strips of the quadrant outside the image's rectangle.
    const cv::Rect quadrant = cv::Rect(cv::Point(q % 2 ? xc : 0, q < 2 ? 0 : yc),
                                       cv::Point(q % 2 ? 2 * s : xc, q < 2 ? yc : 2 * s)) &
                              area;
    const cv::Rect dst =
        cv::Rect(p.x1a, p.y1a, std::max(p.x2a - p.x1a, 0), std::max(p.y2a - p.y1a, 0)) & quadrant;
    if (dst.area() == 0) {
      if (quadrant.area() > 0) canvas(quadrant).setTo(fill);
    } else {
      const int qx2 = quadrant.x + quadrant.width, qy2 = quadrant.y + quadrant.height;
      const int dx2 = dst.x + dst.width, dy2 = dst.y + dst.height;
      const cv::Rect strips[4] = {
          {quadrant.x, quadrant.y, quadrant.width, dst.y - quadrant.y},  // above
          {quadrant.x, dy2, quadrant.width, qy2 - dy2},                  // below
          {quadrant.x, dst.y, dst.x - quadrant.x, dst.height},           // left
          {dx2, dst.y, qx2 - dx2, dst.height}};                          // right
      for (const cv::Rect& strip : strips) {
        if (strip.width > 0 && strip.height > 0) canvas(strip).setTo(fill);
      }
      const cv::Rect src(p.x1b + dst.x - p.x1a, p.y1b + dst.y - p.y1a, dst.width, dst.height);
      part.image(src).copyTo(canvas(dst));
    }
    append_instances(out, part, static_cast<float>(p.padw), static_cast<float>(p.padh));
  }
  const float limit = static_cast<float>(2 * s);
  // Oriented polygons crossing the border become their visible rectangle (boxes follow); other
  // polygons are clamped point by point beside their clipped boxes.
  if (!out.oriented) clip_boxes(out, limit, limit);
  clip_polygons(out, limit, limit);
  clip_keypoints(out, limit, limit);
  std::vector<bool> keep(out.boxes.size());
  for (size_t i = 0; i < out.boxes.size(); ++i) {
    keep[i] = out.boxes[i][2] - out.boxes[i][0] > 0 && out.boxes[i][3] - out.boxes[i][1] > 0;
  }
  keep_boxes(out, keep);
  return out;
}

Sample random_mosaic4(const std::array<const Sample*, 4>& parts, int s, SampleRng& rng) {
  const int yc = static_cast<int>(rng.uniform(0.5 * s, 1.5 * s));
  const int xc = static_cast<int>(rng.uniform(0.5 * s, 1.5 * s));
  return mosaic4(parts, s, xc, yc);
}

}  // namespace trainer::data::augment
