// Mosaic placement and assembly; see mosaic.h.
#include "data/augment/mosaic.h"

#include <algorithm>

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
  Sample out;
  out.image = cv::Mat(2 * s, 2 * s, CV_8UC3, cv::Scalar(114, 114, 114));
  out.keypoints_per_box = parts[0]->keypoints_per_box;
  for (int q = 0; q < 4; ++q) {
    const Sample& part = *parts[q];
    const MosaicPlacement p = mosaic_placement(q, xc, yc, part.height(), part.width(), s);
    if (p.x2a > p.x1a && p.y2a > p.y1a) {
      part.image(cv::Rect(p.x1b, p.y1b, p.x2b - p.x1b, p.y2b - p.y1b))
          .copyTo(out.image(cv::Rect(p.x1a, p.y1a, p.x2a - p.x1a, p.y2a - p.y1a)));
    }
    append_instances(out, part, static_cast<float>(p.padw), static_cast<float>(p.padh));
  }
  const float limit = static_cast<float>(2 * s);
  clip_boxes(out, limit, limit);
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
