// The YOLO26 / YOLO11 layer tables and parse_model's scaling (see model_spec.h).
// Tested by tests/model/test_model_keys.cpp: make_model_spec tables: key names/shapes for
//   yolo26n/yolo11n, scale m forces c3k, l doubles repeats, make_divisible.
#include "model/model_spec.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/error.h"

namespace trainer::model {
namespace {

// One row of the unscaled yaml: from, n, module and its raw arguments.
struct RawLayer {
  std::vector<int> from;
  int n;
  LayerKind kind;
  int64_t c2 = 0;  // unscaled output channels (Conv, C3k2, SPPF, C2PSA)
  int64_t k = 1, s = 1;
  bool c3k = false;
  double e = 0.5;
  bool attn = false;
};

RawLayer conv(int64_t c2, int64_t k, int64_t s) {
  return {{-1}, 1, LayerKind::kConv, c2, k, s};
}
RawLayer c3k2(int n, int64_t c2, bool c3k, double e = 0.5, bool attn = false) {
  RawLayer r{{-1}, n, LayerKind::kC3k2, c2};
  r.c3k = c3k;
  r.e = e;
  r.attn = attn;
  return r;
}
RawLayer plain(std::vector<int> from, LayerKind kind, int n = 1, int64_t c2 = 0) {
  return {std::move(from), n, kind, c2};
}

// yolo26.yaml / yolo11.yaml, detection (reference-behaviour.md 4.1).
std::vector<RawLayer> raw_layers(ModelFamily family) {
  const bool y26 = family == ModelFamily::kYolo26;
  return {
      conv(64, 3, 2),                                              // 0 P1/2
      conv(128, 3, 2),                                             // 1 P2/4
      c3k2(2, 256, false, 0.25),                                   // 2
      conv(256, 3, 2),                                             // 3 P3/8
      c3k2(2, 512, false, 0.25),                                   // 4
      conv(512, 3, 2),                                             // 5 P4/16
      c3k2(2, 512, true),                                          // 6
      conv(1024, 3, 2),                                            // 7 P5/32
      c3k2(2, 1024, true),                                         // 8
      plain({-1}, LayerKind::kSppf, 1, 1024),                      // 9
      plain({-1}, LayerKind::kC2Psa, 2, 1024),                     // 10
      plain({-1}, LayerKind::kUpsample),                           // 11
      plain({-1, 6}, LayerKind::kConcat),                          // 12
      c3k2(2, 512, y26),                                           // 13
      plain({-1}, LayerKind::kUpsample),                           // 14
      plain({-1, 4}, LayerKind::kConcat),                          // 15
      c3k2(2, 256, y26),                                           // 16 P3 out
      conv(256, 3, 2),                                             // 17
      plain({-1, 13}, LayerKind::kConcat),                         // 18
      c3k2(2, 512, y26),                                           // 19 P4 out
      conv(512, 3, 2),                                             // 20
      plain({-1, 10}, LayerKind::kConcat),                         // 21
      y26 ? c3k2(1, 1024, true, 0.5, true) : c3k2(2, 1024, true),  // 22 P5 out
      plain({16, 19, 22}, LayerKind::kDetect),                     // 23
  };
}

std::string bool_text(bool b) {
  return b ? "True" : "False";
}

}  // namespace

int64_t make_divisible(double x, int64_t divisor) {
  return static_cast<int64_t>(std::ceil(x / static_cast<double>(divisor))) * divisor;
}

ScaleParams scale_params(char scale) {
  switch (scale) {
    case 'n':
      return {0.50, 0.25, 1024, false};
    case 's':
      return {0.50, 0.50, 1024, false};
    case 'm':
      return {0.50, 1.00, 512, true};
    case 'l':
      return {1.00, 1.00, 512, true};
    case 'x':
      return {1.00, 1.50, 512, true};
    default:
      throw core::ConfigError(std::string("unknown model scale '") + scale +
                              "' (expected n, s, m, l or x)");
  }
}

ScaleParams tiny_scale_params() {
  return {0.33, 0.0625, 1024, false};
}

ModelSpec make_model_spec(ModelFamily family, const ScaleParams& scale, int64_t nc,
                          const HeadVariant& variant) {
  const KeypointShape& kpt_shape = variant.kpt_shape;
  if (family == ModelFamily::kCustomYaml) {  // build_yolo_model refused it, naming the file
    throw std::logic_error("make_model_spec: a model yaml has no built-in spec");
  }
  if (nc < 1)
    throw core::ConfigError("number of classes must be at least 1, got " + std::to_string(nc));
  if ((kpt_shape.count > 0) + variant.oriented + variant.masks > 1) {
    throw core::ConfigError("a model has one task head: keypoints, oriented boxes or masks");
  }
  if (kpt_shape.count < 0 || (kpt_shape.count > 0 && kpt_shape.dims != 2 && kpt_shape.dims != 3)) {
    throw core::ConfigError("kpt_shape must be [K, 2] or [K, 3] with K >= 1, got [" +
                            std::to_string(kpt_shape.count) + ", " +
                            std::to_string(kpt_shape.dims) + "]");
  }
  ModelSpec spec;
  spec.family = family;
  spec.scale = scale;
  spec.nc = nc;
  spec.reg_max = family == ModelFamily::kYolo26 ? 1 : 16;
  spec.end2end = family == ModelFamily::kYolo26;
  spec.kpt_shape = kpt_shape;
  spec.oriented = variant.oriented;
  spec.nm = variant.masks ? kMaskCoefficients : 0;
  std::vector<int64_t> ch;  // output channels per layer
  const int64_t input_channels = 3;
  for (const RawLayer& raw : raw_layers(family)) {
    LayerSpec l;
    l.from = raw.from;
    l.kind = raw.kind;
    // Repeats: max(round(n * depth), 1) when n > 1 (Python round: half to even).
    l.repeats =
        raw.n > 1 ? std::max(static_cast<int>(std::nearbyint(raw.n * scale.depth)), 1) : raw.n;
    auto input = [&](int f) {
      if (f == -1) return ch.empty() ? input_channels : ch.back();
      return ch.at(static_cast<size_t>(f));
    };
    auto scaled = [&](int64_t c) {
      return make_divisible(static_cast<double>(std::min(c, scale.max_channels)) * scale.width, 8);
    };
    l.c1 = input(raw.from[0]);
    switch (raw.kind) {
      case LayerKind::kConv:
        l.c2 = scaled(raw.c2);
        l.k = raw.k;
        l.s = raw.s;
        break;
      case LayerKind::kC3k2:
        l.c2 = scaled(raw.c2);
        l.c3k = raw.c3k || scale.force_c3k;
        l.e = raw.e;
        l.attn = raw.attn;
        break;
      case LayerKind::kSppf:
        l.c2 = scaled(raw.c2);
        l.k = 5;
        l.pool_n = 3;
        l.shortcut = family == ModelFamily::kYolo26;
        l.cv1_act = family == ModelFamily::kYolo11;
        break;
      case LayerKind::kC2Psa:
        l.c2 = scaled(raw.c2);
        break;
      case LayerKind::kUpsample:
        l.c2 = l.c1;
        break;
      case LayerKind::kConcat:
        l.c2 = 0;
        for (int f : raw.from) l.c2 += input(f);
        break;
      case LayerKind::kDetect:
        for (int f : raw.from) l.ch.push_back(input(f));
        l.c2 = 0;
        l.nc = nc;
        l.reg_max = spec.reg_max;
        l.end2end = spec.end2end;
        l.kpt_shape = kpt_shape;
        l.oriented = variant.oriented;
        l.cls_width = variant.cls_width;
        if (variant.masks) {
          l.nm = kMaskCoefficients;
          l.npr = scaled(kProtoChannels);  // parse_model scales Segment's npr like a width
        }
        break;
    }
    ch.push_back(l.c2);
    spec.layers.push_back(l);
  }
  return spec;
}

std::string LayerSpec::module_name() const {
  switch (kind) {
    case LayerKind::kConv:
      return "Conv";
    case LayerKind::kC3k2:
      return "C3k2";
    case LayerKind::kSppf:
      return "SPPF";
    case LayerKind::kC2Psa:
      return "C2PSA";
    case LayerKind::kUpsample:
      return "Upsample";
    case LayerKind::kConcat:
      return "Concat";
    case LayerKind::kDetect:
      if (is_pose()) return end2end ? "Pose26" : "Pose";
      if (is_obb()) return end2end ? "OBB26" : "OBB";
      if (is_segment()) return end2end ? "Segment26" : "Segment";
      return "Detect";
  }
  return "?";
}

std::string LayerSpec::arguments() const {
  std::ostringstream out;
  switch (kind) {
    case LayerKind::kConv:
      out << "[" << c1 << ", " << c2 << ", " << k << ", " << s << "]";
      break;
    case LayerKind::kC3k2:
      out << "[" << c1 << ", " << c2 << ", " << repeats << ", " << bool_text(c3k);
      if (e != 0.5 || attn) out << ", " << e;
      if (attn) out << ", " << bool_text(attn);
      out << "]";
      break;
    case LayerKind::kSppf:
      out << "[" << c1 << ", " << c2 << ", " << k;
      if (shortcut) out << ", " << pool_n << ", " << bool_text(shortcut);
      out << "]";
      break;
    case LayerKind::kC2Psa:
      out << "[" << c1 << ", " << c2 << ", " << repeats << "]";
      break;
    case LayerKind::kUpsample:
      out << "[None, 2, 'nearest']";
      break;
    case LayerKind::kConcat:
      out << "[1]";
      break;
    case LayerKind::kDetect:
      // The reference's args: [nc, (kpt_shape | ne | nm, npr,) reg_max, end2end, ch].
      out << "[" << nc << ", ";
      if (is_pose()) out << "[" << kpt_shape.count << ", " << kpt_shape.dims << "], ";
      if (is_obb()) out << "1, ";
      if (is_segment()) out << nm << ", " << npr << ", ";
      // The reference prints an unset end2end as None (yolo11-obb.yaml and yolo11-seg.yaml have
      // no key).
      out << reg_max << ", "
          << ((is_obb() || is_segment()) && !end2end ? "None" : bool_text(end2end)) << ", [";
      for (size_t i = 0; i < ch.size(); ++i) out << (i ? ", " : "") << ch[i];
      out << "]]";
      break;
  }
  return out.str();
}

}  // namespace trainer::model
