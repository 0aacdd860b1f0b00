// Building the layer list and running it (see yolo_model.h).
// Tested by tests/model/test_detect_head.cpp: forward_for_loss shapes, predict/predict_topk rows,
//   strides, o2o head copy and detached features.
#include "model/yolo_model.h"

#include <torch/torch.h>

#include "core/error.h"
#include "model/attention.h"
#include "model/blocks.h"

namespace trainer::model {
namespace {

// Switches a module to eval mode for a scope and restores the previous mode.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(torch::nn::Module& m) : module_(m), was_training_(m.is_training()) {
    if (was_training_) module_.eval();
  }
  ~EvalModeGuard() {
    if (was_training_) module_.train();
  }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

std::shared_ptr<UnaryModule> make_unary(const LayerSpec& l) {
  switch (l.kind) {
    case LayerKind::kConv:
      return Conv(l.c1, l.c2, l.k, l.s).ptr();
    case LayerKind::kC3k2:
      return C3k2(l.c1, l.c2, l.repeats, l.c3k, l.e, l.attn).ptr();
    case LayerKind::kSppf:
      return Sppf(l.c1, l.c2, l.k, l.pool_n, l.shortcut, l.cv1_act).ptr();
    case LayerKind::kC2Psa:
      return C2Psa(l.c1, l.c2, l.repeats).ptr();
    case LayerKind::kUpsample:
      return Upsample2x().ptr();
    default:
      return nullptr;
  }
}

}  // namespace

YoloModelImpl::YoloModelImpl(const ModelName& name, const ModelSpec& spec)
    : name_(name), spec_(spec) {
  layers_ = register_module("model", torch::nn::ModuleList());
  for (const LayerSpec& l : spec_.layers) {
    if (l.kind == LayerKind::kConcat) {
      layers_->push_back(Concat().ptr());
      unary_.push_back(nullptr);
    } else if (l.kind == LayerKind::kDetect) {
      if (l.is_pose()) {
        const auto kind = l.end2end ? PoseHeadKind::kPose26 : PoseHeadKind::kPose;
        head_ = Detect(std::shared_ptr<DetectImpl>(std::make_shared<PoseImpl>(
            l.nc, l.reg_max, l.end2end, l.ch, l.kpt_shape, kind, l.cls_width)));
      } else if (l.is_obb()) {
        const auto kind = l.end2end ? ObbHeadKind::kObb26 : ObbHeadKind::kObb;
        head_ = Detect(std::shared_ptr<DetectImpl>(
            std::make_shared<ObbImpl>(l.nc, l.reg_max, l.end2end, l.ch, kind, l.cls_width)));
      } else if (l.is_segment()) {
        const auto kind = l.end2end ? SegmentHeadKind::kSegment26 : SegmentHeadKind::kSegment;
        head_ = Detect(std::shared_ptr<DetectImpl>(std::make_shared<SegmentImpl>(
            l.nc, l.nm, l.npr, l.reg_max, l.end2end, l.ch, kind, l.cls_width)));
      } else {
        head_ = Detect(l.nc, l.reg_max, l.end2end, l.ch, l.cls_width);
      }
      layers_->push_back(head_.ptr());
      unary_.push_back(nullptr);
    } else {
      auto m = make_unary(l);
      layers_->push_back(m);
      unary_.push_back(m);
    }
  }
  TORCH_CHECK(!head_.is_empty(), "model spec has no Detect layer");
  // Strides from a forward pass, as the reference does (it uses 256 px; any multiple of 32 gives
  // the same ratios), in eval mode so BN statistics stay untouched.
  {
    torch::NoGradGuard no_grad;
    EvalModeGuard eval(*this);
    const int64_t s = 64;
    auto out = run(torch::zeros({1, 3, s, s}));
    std::vector<double> strides;
    for (const auto& level : out.one2many) {
      strides.push_back(static_cast<double>(s) / static_cast<double>(level.size(2)));
    }
    head_->set_strides(strides);  // also the bias init
  }
}

DetectOutput YoloModelImpl::run(const torch::Tensor& images) {
  TORCH_CHECK(images.dim() == 4 && images.size(1) == 3, "expected images (B, 3, H, W), got ",
              images.sizes());
  TORCH_CHECK(images.size(2) % 32 == 0 && images.size(3) % 32 == 0,
              "image height and width must be multiples of 32, got ", images.size(2), "x",
              images.size(3));
  std::vector<torch::Tensor> outputs;
  outputs.reserve(spec_.layers.size());
  auto input_of = [&](int f) {
    return f == -1 ? outputs.back() : outputs.at(static_cast<size_t>(f));
  };
  // Outputs that a later layer names by index (the reference's `save` list); every other one is
  // dropped as soon as the next layer has consumed it, so an inference forward holds a few
  // feature maps at a time instead of all of them (under autograd the graph keeps what it needs).
  std::vector<bool> saved(spec_.layers.size(), false);
  for (const LayerSpec& l : spec_.layers) {
    for (int f : l.from) {
      if (f >= 0) saved.at(static_cast<size_t>(f)) = true;
    }
  }
  for (size_t i = 0; i < spec_.layers.size(); ++i) {
    if (i >= 2 && !saved[i - 2]) outputs[i - 2] = torch::Tensor();  // consumed by layer i - 1
    const LayerSpec& l = spec_.layers[i];
    if (l.kind == LayerKind::kDetect) {
      std::vector<torch::Tensor> feats;
      for (int f : l.from) feats.push_back(input_of(f));
      return head_->forward(feats);
    }
    if (l.kind == LayerKind::kConcat) {
      std::vector<torch::Tensor> xs;
      for (int f : l.from) xs.push_back(input_of(f));
      outputs.push_back(torch::cat(xs, 1));
    } else {
      outputs.push_back(unary_[i]->forward(i == 0 ? images : input_of(l.from[0])));
    }
    if (observer_) outputs.back() = observer_(i, outputs.back());
  }
  TORCH_CHECK(false, "model spec has no Detect layer");
}

DetectOutput YoloModelImpl::forward_for_loss(const torch::Tensor& images) {
  return run(images);
}

torch::Tensor YoloModelImpl::predict_topk(const torch::Tensor& images, int64_t max_det) {
  TORCH_CHECK(spec_.end2end, name_.display(), " has no end-to-end head");
  torch::NoGradGuard no_grad;
  EvalModeGuard eval(*this);
  auto raw = run(images);
  return topk_postprocess(head_->decode_output(raw, /*one2one=*/true).transpose(1, 2), max_det,
                          head_->extra_channels());
}

std::vector<torch::Tensor> YoloModelImpl::predict(const torch::Tensor& images,
                                                  const PredictOptions& options) {
  torch::NoGradGuard no_grad;
  EvalModeGuard eval(*this);
  return postprocess(run(images), options);
}

std::vector<torch::Tensor> YoloModelImpl::postprocess(const DetectOutput& raw,
                                                      const PredictOptions& options) {
  torch::NoGradGuard no_grad;
  const bool one2one = spec_.end2end && !options.use_one2many;
  const int64_t extra = head_->extra_channels();
  const torch::Tensor decoded = head_->decode_output(raw, one2one);  // float32
  if (one2one) {
    auto top = topk_postprocess(decoded.transpose(1, 2), options.max_det, extra);
    std::vector<torch::Tensor> out;
    for (int64_t b = 0; b < top.size(0); ++b) {
      out.push_back(filter_by_confidence(top[b], options.conf, options.max_det));
    }
    return out;
  }
  PredictOptions nms = options;
  nms.rotated = spec_.oriented;  // OBB rows are [cx, cy, w, h, score, class, angle]
  return non_max_suppression(decoded, nms, extra);
}

std::shared_ptr<PoseImpl> YoloModelImpl::pose_head() const {
  return std::dynamic_pointer_cast<PoseImpl>(head_.ptr());
}

std::shared_ptr<ObbImpl> YoloModelImpl::obb_head() const {
  return std::dynamic_pointer_cast<ObbImpl>(head_.ptr());
}

std::shared_ptr<SegmentImpl> YoloModelImpl::segment_head() const {
  return std::dynamic_pointer_cast<SegmentImpl>(head_.ptr());
}

RowLayout YoloModelImpl::row_layout() const {
  return {head_->extra_channels(), spec_.kpt_shape, spec_.oriented};
}

RealNvp YoloModelImpl::flow() const {
  const auto pose = pose_head();
  return pose ? pose->flow() : RealNvp(nullptr);
}

std::vector<std::shared_ptr<torch::nn::Module>> YoloModelImpl::layer_modules() const {
  return layers_->children();
}

YoloModel build_yolo_model(const ModelName& name, int num_classes, KeypointShape kpt_shape) {
  require_builtin_model(name);
  const ScaleParams scale = name.scale == 't' ? tiny_scale_params() : scale_params(name.scale);
  HeadVariant variant;
  const core::TaskHead head = core::task_row(name.task).head;  // the task's row says what
  if (head.keypoints) variant.kpt_shape = kpt_shape;
  variant.oriented = head.oriented;
  variant.masks = head.masks;
  variant.cls_width = name.cls_width;
  return YoloModel(name, make_model_spec(name.family, scale, num_classes, variant));
}

YoloModel build_tiny_yolo_model(ModelFamily family, int num_classes, core::Task task,
                                KeypointShape kpt_shape) {
  return build_yolo_model(ModelName{family, 't', {}, task, {}}, num_classes, kpt_shape);
}

}  // namespace trainer::model
