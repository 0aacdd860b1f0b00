// One training or validation batch as the loader hands it to the trainer. uint8 pixels stay uint8
// until they reach the device (a quarter of the bytes to copy); normalisation happens there.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

namespace trainer::data {

// Geometry that maps a letterboxed image back to its original pixels (for validation outputs).
struct ImageGeometry {
  int original_height = 0;
  int original_width = 0;
  double gain_x = 1.0;  // letterboxed x = original x * gain_x + pad_x
  double gain_y = 1.0;  // letterboxed y = original y * gain_y + pad_y (the reference's ratio_pad:
                        // the load-time resize rounds each side, so the two gains differ a little)
  double pad_x = 0.0;   // left padding in letterboxed pixels
  double pad_y = 0.0;   // top padding in letterboxed pixels
};

struct Batch {
  // (B, 3, H, W) uint8, RGB, CPU (pinned when CUDA is available). A channels-last view of the
  // loader's (B, H, W, 3) buffer: use images_to_device() (loader.h) or .contiguous() before
  // reading it as NCHW memory. The buffer is reused once every reference to it is dropped.
  torch::Tensor images;
  torch::Tensor labels;  // (n, 6) float32: [image_index, class, cx, cy, w, h], normalised to [0, 1]
  // (n, K, 3) float32, the labels' rows in order: keypoint x / W, y / H and visibility 0/1/2 as
  // labelled (0 once a transform moved the point out of the image); K = 0 for the other tasks.
  torch::Tensor keypoints;
  // (n, 5) float32, OBB only (else (0, 5)), the labels' rows in order: the rotated box of each
  // polygon [cx / W, cy / H, w / W, h / H, angle], w the long side, angle in [-pi/4, 3pi/4).
  torch::Tensor rboxes;
  // Segmentation only (undefined for the other tasks), at (H / r, W / r) with r = mask_ratio:
  // overlap_mask: (B, H / r, W / r) int32, pixel value j + 1 = the image's j-th label row (each
  // image's rows are ordered by decreasing mask area), 0 = background; otherwise (n, H / r, W / r)
  // uint8 0/1, one mask per label row (data/instance_masks.h).
  torch::Tensor masks;
  bool overlap_masks = true;
  std::vector<std::string> files;        // source image per batch row
  std::vector<int64_t> dataset_indices;  // dataset index per batch row
  // Per batch row. Validation (augment=false): original = (resized - pad) / ratio, with ratio the
  // reference's gain (resized height / original height times the letterbox ratio). Training
  // batches only carry the original size (ratio 1, pad 0).
  std::vector<ImageGeometry> geometry;
  // The batch's place in the epoch: this rank's count of batches before it, or with whole-batch
  // sharding (LoaderOptions::shard_batches) its index in the single-process plan.
  int64_t index = 0;
};

}  // namespace trainer::data
