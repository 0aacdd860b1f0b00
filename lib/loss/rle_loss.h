// YOLO26-pose's residual log-likelihood estimation (RLE) loss on the visible keypoints of the
// positives: a learned density (the flow) of the residual scaled by the predicted sigma.
//
// Why its own unit: the reference's formula subtracts log phi once per dimension, drops non-finite
// residuals and clamps them, and must add a zero touching the flow when nothing is left; each of
// these changes the value or the gradients and is tested here.
#pragma once

#include <ATen/core/Tensor.h>

#include "loss/keypoint_flow.h"

namespace trainer::loss {

// The RLELoss formula (residual, target-weighted, size-averaged): sigma (N, 2), log_phi (N),
// error (N, 2), weight (N) -> (1 / N) sum_n sum_d w_n (ln s_nd - log_phi_n + ln 2 s_nd + |e_nd|).
at::Tensor rle_formula(const at::Tensor& sigma, const at::Tensor& log_phi, const at::Tensor& error,
                       const at::Tensor& weight);

// A 0-d zero that is in the graph of `pred` and of every flow parameter.
at::Tensor rle_zero(const at::Tensor& pred, const KeypointFlow& flow);

// pred_xy (N, K, >= 2) predicted keypoints (grid units; x, y first), sigma_raw (N, K, 2) the raw
// sigma channels, gt (N, K, >= 2) GT keypoints (grid units), mask (N, K) bool visible, weights (K)
// per-keypoint weights; sigma_tiny the smallest normal value of the raw sigma's dtype (the clamp
// floor). sigma = clamp(sigmoid(raw), tiny); e = (pred - gt) / (sigma + 1e-9); rows with a
// non-finite e are dropped, e is clamped to [-100, 100]; the formula above with log_phi =
// flow.log_prob(e), clamped >= 0. With nothing left: rle_zero.
at::Tensor rle_loss(const at::Tensor& pred_xy, const at::Tensor& sigma_raw, const at::Tensor& gt,
                    const at::Tensor& mask, const at::Tensor& weights, const KeypointFlow& flow,
                    double sigma_tiny);

// Static shapes: rle_loss on keypoint rows (..., K) gathered into fixed slots, every row computed.
// mask (..., K) is the visibility, false on filler slots. Rows that rle_loss drops (invisible, or
// a non-finite residual) get residual 0 and sigma 1 before the flow and weight 0 after it, so
// neither their value nor their gradient reaches the result; the sum is divided by the number of
// rows kept (a device count, at least 1). Nothing kept: exactly 0.
at::Tensor masked_rle_loss(const at::Tensor& pred_xy, const at::Tensor& sigma_raw,
                           const at::Tensor& gt, const at::Tensor& mask, const at::Tensor& weights,
                           const KeypointFlow& flow, double sigma_tiny);

}  // namespace trainer::loss
