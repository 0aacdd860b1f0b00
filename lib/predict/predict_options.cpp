// See predict_options.h.
#include "predict/predict_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "core/edit_distance.h"
#include "core/error.h"
#include "engine/checkpoint/weights_source.h"

namespace trainer::predict {
namespace {

using Setter = std::function<void(PredictOptions&, const std::string& key, const std::string&)>;

[[noreturn]] void bad_value(const std::string& key, const std::string& value,
                            const std::string& expected) {
  throw core::ConfigError("predict: " + key + "=" + value + ": expected " + expected);
}

bool parse_bool(const std::string& key, const std::string& v) {
  if (v == "true" || v == "True" || v == "1") return true;
  if (v == "false" || v == "False" || v == "0") return false;
  bad_value(key, v, "true or false");
}

double parse_number(const std::string& key, const std::string& v, double lo, double hi) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // std::stod also reads "nan", "inf" and hexadecimal: none is a value a user means here.
  const bool hex = v.find_first_of("xX") != std::string::npos;
  if (used != v.size() || v.empty() || hex || !std::isfinite(x)) bad_value(key, v, "a number");
  if (x < lo || x > hi) bad_value(key, v, fmt::format("a value in [{:g}, {:g}]", lo, hi));
  return x;
}

int64_t parse_int(const std::string& key, const std::string& v, int64_t lo, int64_t hi) {
  const double x = parse_number(key, v, static_cast<double>(lo), static_cast<double>(hi));
  if (x != static_cast<double>(static_cast<int64_t>(x))) bad_value(key, v, "an integer");
  return static_cast<int64_t>(x);
}

std::string parse_string(const std::string& v) {
  if (v == "null" || v == "None" || v == "~") return "";
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"weights", [](PredictOptions& o, auto&, auto& v) { o.weights = parse_string(v); }},
      {"source", [](PredictOptions& o, auto&, auto& v) { o.source = parse_string(v); }},
      {"model", [](PredictOptions& o, auto&, auto& v) { o.model = parse_string(v); }},
      {"data", [](PredictOptions& o, auto&, auto& v) { o.data = parse_string(v); }},
      {"imgsz",
       [](PredictOptions& o, auto& k, auto& v) {
         o.imgsz = static_cast<int>(parse_int(k, v, 32, 8192));
         o.imgsz_given = true;
       }},
      {"conf", [](PredictOptions& o, auto& k, auto& v) { o.conf = parse_number(k, v, 0, 1); }},
      {"iou", [](PredictOptions& o, auto& k, auto& v) { o.iou = parse_number(k, v, 0, 1); }},
      {"max_det",
       [](PredictOptions& o, auto& k, auto& v) { o.max_det = parse_int(k, v, 1, 100000); }},
      {"device", [](PredictOptions& o, auto&, auto& v) { o.device = parse_string(v); }},
      {"batch", [](PredictOptions& o, auto& k, auto& v) { o.batch = parse_int(k, v, 1, 4096); }},
      {"save", [](PredictOptions& o, auto& k, auto& v) { o.save = parse_bool(k, v); }},
      {"save_txt", [](PredictOptions& o, auto& k, auto& v) { o.save_txt = parse_bool(k, v); }},
      {"save_conf", [](PredictOptions& o, auto& k, auto& v) { o.save_conf = parse_bool(k, v); }},
      {"save_json", [](PredictOptions& o, auto& k, auto& v) { o.save_json = parse_bool(k, v); }},
      {"project", [](PredictOptions& o, auto&, auto& v) { o.project = parse_string(v); }},
      {"name", [](PredictOptions& o, auto&,
                  auto& v) { o.name = parse_string(v).empty() ? "predict" : parse_string(v); }},
      {"exist_ok", [](PredictOptions& o, auto& k, auto& v) { o.exist_ok = parse_bool(k, v); }},
      {"line_width",
       [](PredictOptions& o, auto& k, auto& v) {
         o.line_width = parse_string(v).empty() ? 0 : static_cast<int>(parse_int(k, v, 0, 100));
       }},
      {"vid_stride",
       [](PredictOptions& o, auto& k, auto& v) { o.vid_stride = parse_int(k, v, 1, 100000); }},
      {"half", [](PredictOptions& o, auto& k, auto& v) { o.half = parse_bool(k, v); }},
      {"nms",
       [](PredictOptions& o, auto& k, auto& v) {
         o.nms = parse_string(v).empty() ? NmsChoice::kAuto
                 : parse_bool(k, v)      ? NmsChoice::kOn
                                         : NmsChoice::kOff;
       }},
      {"agnostic_nms",
       [](PredictOptions& o, auto& k, auto& v) { o.agnostic_nms = parse_bool(k, v); }},
  };
  return table;
}

std::string closest_key(const std::string& key) {
  std::string best;
  size_t best_distance = 4;  // suggest only near misses
  for (const auto& [name, setter] : setters()) {
    const size_t d = core::edit_distance(key, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  return best;
}

}  // namespace

PredictOptions parse_predict_args(const std::vector<std::string>& args) {
  PredictOptions options;
  for (const auto& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw core::ConfigError("predict: '" + arg + "' is not key=value (e.g. source=images/)");
    }
    const std::string key = arg.substr(0, eq);
    const auto it = setters().find(key);
    if (it == setters().end()) {
      const std::string near = closest_key(key);
      throw core::ConfigError("predict: unknown key '" + key + "'" +
                              (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                              "; valid keys: weights, source, imgsz, conf, iou, max_det, device, "
                              "batch, save, save_txt, save_conf, save_json, project, name, "
                              "exist_ok, line_width, vid_stride, half, nms, agnostic_nms, model, "
                              "data");
    }
    it->second(options, key, arg.substr(eq + 1));
  }
  if (options.weights.empty() && engine::is_weights_file(options.model)) {
    options.weights = options.model;  // model=best.pt: the weights, as in `val`
    options.model.clear();
  }
  if (options.weights.empty()) {
    throw core::ConfigError("predict: weights=PATH is required (a .pt or .ckpt file)");
  }
  if (options.source.empty()) {
    throw core::ConfigError(
        "predict: source=PATH is required (an image, folder, glob, .txt or "
        "video)");
  }
  return options;
}

}  // namespace trainer::predict
