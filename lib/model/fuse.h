// An inference copy of a model with every Conv's BatchNorm folded into its convolution (the
// reference's BaseModel.fuse(), run before it validates or predicts).
//
// Why: validation and prediction run the eval-mode forward on every image; a folded BN is one
// elementwise pass over each activation fewer and one tensor less alive per layer. The copy is
// separate because folding is irreversible and the trained model (or the EMA it came from) must
// keep its BatchNorms; its outputs equal the source's in eval mode up to float rounding.
#pragma once

#include "model/yolo_model.h"

namespace trainer::model {

// A new model with `source`'s architecture, weights and buffers (on its device and dtype), every
// Conv fused and in eval mode. Memory format is not carried over: apply it to the copy.
YoloModel fused_copy(const YoloModelImpl& source);

// An inference copy that runs only the head branch its postprocess decodes: the one-to-many
// head when `use_one2many` (YOLO11 always; YOLO26 under NMS), else YOLO26's one-to-one head. Not
// for a copy whose outputs also feed the loss (the fit's validation), which needs both.
void keep_decoded_branch(YoloModelImpl& model, bool use_one2many);

// Folds every Conv's BatchNorm of `model` in place (ConvImpl::fuse_batchnorm).
void fuse_batchnorms(torch::nn::Module& model);

}  // namespace trainer::model
