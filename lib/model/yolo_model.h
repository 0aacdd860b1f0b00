// The YOLO model of every task: the scaled layer list (model_spec.h) built into modules whose
// parameter names equal the reference's state-dict keys (model.0.conv.weight, ...), with the
// task's head (boxes; plus keypoints, masks or angles).
//
// Why: the trainer, the loss, the validator and the weights import all work on this one type;
// keys equal to the reference's let users start from (and go back to) reference checkpoints.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <functional>
#include <memory>
#include <vector>

#include "model/detect_head.h"
#include "model/detect_output.h"
#include "model/detection_rows.h"
#include "model/keypoint_shape.h"
#include "model/model_name.h"
#include "model/model_spec.h"
#include "model/obb_head.h"
#include "model/pose_head.h"
#include "model/postprocess.h"
#include "model/real_nvp.h"
#include "model/segment_head.h"

namespace trainer::model {

class YoloModelImpl : public torch::nn::Module {
 public:
  YoloModelImpl(const ModelName& name, const ModelSpec& spec);

  // images: float (B, 3, H, W) in [0, 1], H and W multiples of 32. Raw per-level outputs of every
  // head branch the model runs: what the loss takes (and the validator decodes).
  DetectOutput forward_for_loss(const torch::Tensor& images);

  // Inference, one (n_i, 6) float tensor per image: [x1, y1, x2, y2, score, class] in input
  // pixels; a pose model adds K * ndim columns: [..., class, k1x, k1y, (k1v,) k2x, ...] with the
  // keypoints in input pixels and v = sigmoid. YOLO26: one-to-one head, top-k (max_det), scores >
  // conf, no NMS. YOLO11 (or use_one2many): confidence filter + class-aware NMS. Runs without grad
  // and in eval mode (the previous mode is restored).
  std::vector<torch::Tensor> predict(const torch::Tensor& images, const PredictOptions& options);

  // The decode + postprocess half of predict(), on outputs already computed (the validator runs
  // forward_for_loss in eval mode once for both its loss and its detections).
  std::vector<torch::Tensor> postprocess(const DetectOutput& raw, const PredictOptions& options);

  // YOLO26 only: the end-to-end output before the confidence filter, (B, min(max_det, A), 6)
  // (6 + K * ndim for a pose model).
  torch::Tensor predict_topk(const torch::Tensor& images, int64_t max_det = 300);

  int num_classes() const { return static_cast<int>(spec_.nc); }
  int reg_max() const { return static_cast<int>(spec_.reg_max); }
  bool end2end() const { return spec_.end2end; }
  const std::vector<double>& strides() const { return head_->strides(); }  // {8, 16, 32}
  const ModelName& name() const { return name_; }
  const ModelSpec& spec() const { return spec_; }
  Detect& head() { return head_; }

  // Pose models: the keypoints per object ({0, 3}, count 0, for a detection model), the pose head
  // (nullptr for a detection model) and YOLO26-pose's RealNVP flow of the RLE loss (an empty
  // holder when absent: YOLO11-pose and detection models).
  KeypointShape keypoint_shape() const { return spec_.kpt_shape; }
  std::shared_ptr<PoseImpl> pose_head() const;
  RealNvp flow() const;
  // OBB models: the OBB head (nullptr for the other tasks).
  bool oriented() const { return spec_.oriented; }
  std::shared_ptr<ObbImpl> obb_head() const;
  // Segmentation models: the segment head (nullptr for the other tasks).
  bool segments() const { return spec_.nm > 0; }
  std::shared_ptr<SegmentImpl> segment_head() const;
  // What each of the model's decoded rows holds after the box, score and class (validation and
  // predict read rows through it).
  RowLayout row_layout() const;

  // The layer modules in order ("model.<i>"), for per-layer summaries.
  std::vector<std::shared_ptr<torch::nn::Module>> layer_modules() const;

  // Called with (layer index, output) after every layer before the head, in forward order; what
  // it returns continues in the output's place (return the argument to only observe; return
  // another tensor to feed later layers a reference value, as a layer-by-layer comparison does:
  // engine/precision/precision_choice.h, engine/precision/precision_compare.h). An empty function
  // (default) = none.
  using LayerObserver = std::function<torch::Tensor(size_t, const torch::Tensor&)>;
  void set_layer_observer(LayerObserver observer) { observer_ = std::move(observer); }

 private:
  DetectOutput run(const torch::Tensor& images);

  ModelName name_;
  ModelSpec spec_;
  torch::nn::ModuleList layers_{nullptr};
  std::vector<std::shared_ptr<UnaryModule>> unary_;  // per layer; null for Concat and Detect
  Detect head_{nullptr};
  LayerObserver observer_;
};
TORCH_MODULE(YoloModel);

// A built-in family and scale (yolo26n ... yolo11x) with `num_classes` classes. Scale 't' builds
// the tiny test model. A pose name (name.task == core::Task::kPose: yolo26n-pose, yolo11s-pose)
// builds the family's pose head (Pose26 / Pose) for `kpt_shape`; the other names ignore it. An
// OBB name (yolo26n-obb, yolo11s-obb) builds the family's OBB head (OBB26 / OBB), a segmentation
// name (yolo26n-seg, yolo11s-seg) its segment head (Segment26 / Segment).
YoloModel build_yolo_model(const ModelName& name, int num_classes, KeypointShape kpt_shape = {});

// Width 0.0625, depth 0.33: the same structure and names as the family, for fast CPU tests; with
// task kPose, kObb or kSegment, the tiny model of that task.
YoloModel build_tiny_yolo_model(ModelFamily family, int num_classes,
                                core::Task task = core::Task::kDetect,
                                KeypointShape kpt_shape = {});

}  // namespace trainer::model
