// The YOLO26 / YOLO11 detection layer tables and the reference's scaling rules (parse_model),
// turned into a list of concrete layers (reference-behaviour.md 4.1).
//
// Why a separate plain-data step: the builder, `trainer info` and the FLOPs count all read the
// same scaled table, so the printed arguments are exactly the ones the modules were built with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/keypoint_shape.h"
#include "model/model_name.h"

namespace trainer::model {

enum class LayerKind { kConv, kC3k2, kSppf, kC2Psa, kUpsample, kConcat, kDetect };

// One layer after scaling. Only the fields of its kind are meaningful.
struct LayerSpec {
  std::vector<int> from;  // -1 = previous layer, else an absolute layer index
  int repeats = 1;        // scaled n (printed as "n"; the block builds n inner blocks)
  LayerKind kind = LayerKind::kConv;
  int64_t c1 = 0, c2 = 0;   // input / output channels (Detect: c2 unused)
  int64_t k = 1, s = 1;     // Conv kernel and stride; SPPF pool kernel (k)
  bool c3k = false;         // C3k2
  double e = 0.5;           // C3k2 hidden ratio
  bool attn = false;        // C3k2 attention variant
  int64_t pool_n = 3;       // SPPF chained pools
  bool shortcut = false;    // SPPF residual (YOLO26)
  bool cv1_act = false;     // SPPF cv1 activation (YOLO11)
  std::vector<int64_t> ch;  // Detect input channels
  int64_t nc = 0;           // Detect classes
  int64_t reg_max = 1;      // Detect DFL bins (1 = raw ltrb)
  bool end2end = false;     // Detect one-to-one copy
  KeypointShape kpt_shape =
      kNoKeypoints;       // count > 0: a pose head (Pose26 when end2end, else Pose)
  bool oriented = false;  // an OBB head (OBB26 when end2end, else OBB) with one angle channel
  int64_t nm = 0;         // > 0: a segmentation head (Segment26 when end2end, else Segment)
  int64_t npr = 0;        // its prototype channels (256 scaled by width)
  ClassWidths cls_width;  // Detect class branches' hidden widths (0: max(ch0, min(nc, 100)))

  bool is_pose() const { return kind == LayerKind::kDetect && kpt_shape.count > 0; }
  bool is_obb() const { return kind == LayerKind::kDetect && oriented; }
  bool is_segment() const { return kind == LayerKind::kDetect && nm > 0; }

  std::string module_name() const;  // the reference's class name: Conv, C3k2, SPPF, ...
  std::string arguments() const;    // as the reference prints them: [3, 16, 3, 2]
};

// [depth, width, max_channels] of a scale.
struct ScaleParams {
  double depth = 0.5;
  double width = 0.25;
  int64_t max_channels = 1024;
  bool force_c3k = false;  // scales m, l, x force C3k2's c3k argument on
};

struct ModelSpec {
  ModelFamily family = ModelFamily::kYolo26;
  ScaleParams scale;
  int64_t nc = 80;
  int64_t reg_max = 1;
  bool end2end = true;
  KeypointShape kpt_shape = kNoKeypoints;  // count > 0: a pose model
  bool oriented = false;                   // an OBB model
  int64_t nm = 0;                          // > 0: a segmentation model with nm mask coefficients
  std::vector<LayerSpec> layers;  // the last one is Detect (or its pose/OBB/segment variant)
};

// The scale table (same for both families): n, s, m, l, x.
ScaleParams scale_params(char scale);

// Width 0.0625, depth 0.33, max channels 1024, no c3k override: the tiny test model.
ScaleParams tiny_scale_params();

// What replaces the Detect head: nothing, a pose head for a keypoint shape, an OBB head, or a
// segmentation head (yolo26-pose.yaml, yolo11-obb.yaml, yolo26-seg.yaml, ...: the same backbone
// and neck as detection).
struct HeadVariant {
  KeypointShape kpt_shape = kNoKeypoints;  // count > 0: pose
  bool oriented = false;                   // OBB
  bool masks = false;                      // segmentation: 32 coefficients, 256 scaled prototypes
  ClassWidths cls_width;                   // the class branches' hidden widths (0: default)
};

// The reference's segmentation yaml arguments [nc, 32, 256]: mask coefficients and the
// prototype channels before width scaling.
inline constexpr int64_t kMaskCoefficients = 32;
inline constexpr int64_t kProtoChannels = 256;

// The scaled layer list for a built-in family (kYolo26 or kYolo11) with the head `variant`.
ModelSpec make_model_spec(ModelFamily family, const ScaleParams& scale, int64_t nc,
                          const HeadVariant& variant = {});

// ceil(x / divisor) * divisor, the reference's make_divisible.
int64_t make_divisible(double x, int64_t divisor);

}  // namespace trainer::model
