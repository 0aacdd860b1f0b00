// Batched inference on decoded images: letterbox, forward, postprocess, back to original pixels.
//
// Why: `trainer predict` must give the reference predictor's boxes, so each step is the
// reference's: LetterBox(imgsz, auto=True when the batch's images share one shape, stride 32,
// scaleup) straight from the original image, RGB in [0, 1]; the model's own postprocess (the one
// validation uses: NMS with one label per box, or YOLO26's top-k with nms=false); boxes and
// keypoints mapped back with scale_boxes' rule (data::to_original_point). Validation differs
// only where the reference's does: its loader resizes the long side first and letterboxes to
// rect batch shapes without upscaling, and it keeps every label above conf 0.001.
#pragma once

#include <opencv2/core.hpp>

#include <array>
#include <memory>
#include <vector>

#include "data/batch.h"
#include "model/detection_rows.h"
#include "model/yolo_model.h"
#include "predict/predict_options.h"

namespace trainer::predict {

class TaskOutput;

// One predicted object in original-image pixels. The task's output (task_output.h) fills what
// its task adds beyond the box.
struct PredictedObject {
  std::array<float, 4> box{};  // x1, y1, x2, y2 in original-image pixels
  float score{0};
  int cls{0};
  // Pose: K x (x, y, confidence) in original-image pixels (confidence 1 when the model predicts
  // no visibility); empty for detection.
  std::vector<float> keypoints{};
  // OBB: [cx, cy, w, h, angle] in original-image pixels (`box` is then its corners' extent);
  // empty for the other tasks.
  std::vector<double> rbox{};
  // Segmentation: the instance mask at the original image's size, CV_8U 0/1 (the reference's
  // process_mask with upsample: logits upsampled to the input, > 0, cropped to the box; then the
  // letterbox window resized to the original); empty for the other tasks.
  cv::Mat mask{};
};

struct ImagePrediction {
  std::vector<PredictedObject> objects{};
  int input_height{0}, input_width{0};  // the letterboxed input the model saw
};

struct Timing {
  double preprocess_ms{0}, inference_ms{0}, postprocess_ms{0};  // summed over images
};

// The geometry 8.4.190's scale_boxes / scale_coords derive from the input shape alone (no
// ratio_pad): gain = min(input / original), each side rounded as LetterBox rounds it, per-axis
// gains, padding round(d / 2 - 0.1).
data::ImageGeometry input_to_original(int input_height, int input_width, int original_height,
                                      int original_width);

class Predictor {
 public:
  // `model` is run as given (the caller passes an eval-mode, fused copy on `device`).
  Predictor(model::YoloModelImpl& model, const PredictOptions& options, c10::Device device);
  ~Predictor();

  // What the model's task draws and writes (predict_run's writers use it too).
  const TaskOutput& output() const { return *output_; }

  // One batch of BGR images (any sizes). Adds this batch's times to `timing`.
  std::vector<ImagePrediction> run(const std::vector<cv::Mat>& images, Timing& timing);

 private:
  model::YoloModelImpl& model_;
  model::PredictOptions postprocess_;
  c10::Device device_;
  int imgsz_;
  int stride_;
  bool half_;
  model::RowLayout layout_;
  std::unique_ptr<TaskOutput> output_;
};

}  // namespace trainer::predict
