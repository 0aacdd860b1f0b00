// See detection_bytes.h.
#include "eval/detection_bytes.h"

#include <cstdint>
#include <stdexcept>

namespace trainer::eval {

// Each entry's fixed part: ids, box, score, the mask flag, area rule and class index.
constexpr uint64_t kMinDetectionBytes = 8 + 8 + 4 * 8 + 8 + 1;

void write_detections(core::ByteWriter& out, const std::vector<Detection>& detections) {
  out.pod<uint64_t>(detections.size());
  for (const Detection& d : detections) {
    out.pod(d.image_id);
    out.pod(d.category_id);
    out.pod(d.bbox_xywh);
    out.pod(d.score);
    out.vec(d.keypoints);
    out.vec(d.rbox);
    out.vec(d.poly);
    out.pod<uint8_t>(d.segmentation.has_value());
    if (d.segmentation) {
      out.pod<int32_t>(d.segmentation->height);
      out.pod<int32_t>(d.segmentation->width);
      out.vec(d.segmentation->counts);
    }
    out.pod<uint8_t>(d.area_from_mask);
    out.str(d.file_name);
    out.pod<int32_t>(d.class_index);
  }
}

void read_detections(core::ByteReader& in, std::vector<Detection>& detections) {
  const uint64_t n = in.count(kMinDetectionBytes, "detections");
  detections.reserve(detections.size() + n);
  for (uint64_t k = 0; k < n; ++k) {
    Detection& d = detections.emplace_back();
    d.image_id = in.pod<int64_t>();
    d.category_id = in.pod<int64_t>();
    d.bbox_xywh = in.pod<std::array<double, 4>>();
    d.score = in.pod<double>();
    d.keypoints = in.vec<double>();
    d.rbox = in.vec<double>();
    d.poly = in.vec<double>();
    if (in.pod<uint8_t>() != 0) {
      Rle rle;
      rle.height = in.pod<int32_t>();
      rle.width = in.pod<int32_t>();
      rle.counts = in.vec<uint32_t>();
      d.segmentation = std::move(rle);
    }
    d.area_from_mask = in.pod<uint8_t>() != 0;
    d.file_name = in.str();
    d.class_index = in.pod<int32_t>();
  }
}

}  // namespace trainer::eval
