// Proto and Proto26 (see proto.h).
// Tested by tests/model/test_segment_model.cpp: MaskProto outputs: protos at 1/4 (SiLU range),
//   Proto26 semantic logits at 1/8 in training only, prototype key shapes.
#include "model/proto.h"

#include <torch/torch.h>

#include "model/flop_count.h"

namespace trainer::model {
namespace {

// thop counts a transposed convolution over its input: every input element scatters into
// out_channels / groups x kh x kw outputs.
void count_conv_transpose(const torch::nn::ConvTranspose2dImpl& conv, const torch::Tensor& input) {
  FlopCount* count = active_flop_count();
  if (count == nullptr) return;
  const auto& o = conv.options;
  count->conv_macs += static_cast<double>(input.numel()) *
                      static_cast<double>(o.out_channels() / o.groups()) *
                      static_cast<double>((*o.kernel_size())[0] * (*o.kernel_size())[1]);
}

}  // namespace

MaskProtoImpl::MaskProtoImpl(int64_t c1, int64_t npr, int64_t nm) : multi_scale_(false), nm_(nm) {
  make_chain(c1, npr, nm);
}

MaskProtoImpl::MaskProtoImpl(const std::vector<int64_t>& ch, int64_t npr, int64_t nm, int64_t nc)
    : multi_scale_(true), nm_(nm) {
  make_chain(npr, npr, nm);
  auto refine = register_module("feat_refine", torch::nn::ModuleList());
  for (size_t i = 1; i < ch.size(); ++i) {
    feat_refine_.push_back(Conv(ch[i], ch[0], 1));
    refine->push_back(feat_refine_.back().ptr());
  }
  feat_fuse_ = register_module("feat_fuse", Conv(ch[0], npr, 3));
  semseg_ = register_module("semseg", Chain());
  semseg_->append(Conv(ch[0], npr, 3).ptr());
  semseg_->append(Conv(npr, npr, 3).ptr());
  semseg_->append(torch::nn::Conv2d(torch::nn::Conv2dOptions(npr, nc, 1)).ptr());
}

void MaskProtoImpl::make_chain(int64_t c1, int64_t npr, int64_t nm) {
  cv1_ = register_module("cv1", Conv(c1, npr, 3));
  upsample_ = register_module(
      "upsample",
      torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(npr, npr, 2).stride(2)));
  cv2_ = register_module("cv2", Conv(npr, npr, 3));
  cv3_ = register_module("cv3", Conv(npr, nm, 1));
}

ProtoOutput MaskProtoImpl::forward(const std::vector<torch::Tensor>& x) {
  ProtoOutput out;
  torch::Tensor feat = x.at(0);
  if (multi_scale_) {
    namespace F = torch::nn::functional;
    for (size_t i = 0; i < feat_refine_.size(); ++i) {
      // A constant factor (2 for P4, 4 for P5), as the reference interpolates.
      const double factor = static_cast<double>(int64_t{2} << i);
      feat = feat + F::interpolate(feat_refine_[i]->forward(x.at(i + 1)),
                                   F::InterpolateFuncOptions()
                                       .scale_factor(std::vector<double>{factor, factor})
                                       .mode(torch::kNearest));
    }
  }
  const torch::Tensor fused = multi_scale_ ? feat_fuse_->forward(feat) : feat;
  const torch::Tensor hidden = cv1_->forward(fused);
  count_conv_transpose(*upsample_, hidden);
  out.protos = cv3_->forward(cv2_->forward(upsample_->forward(hidden)));
  if (multi_scale_ && is_training()) out.semantic = semseg_->forward(feat);
  return out;
}

}  // namespace trainer::model
