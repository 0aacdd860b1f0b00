// `trainer info model=NAME [imgsz=640] [nc=80] [weights=FILE]`: builds the model and prints its
// layer table and totals (layers, parameters, gradients, GFLOPs at imgsz) beside the reference's
// published figures; with weights=FILE also checks that the file fits the model. model=FILE.pt
// (ours or a reference checkpoint) or FILE.ckpt describes the model the file holds.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/error.h"
#include "engine/checkpoint/model_from_weights.h"
#include "engine/checkpoint/model_source.h"
#include "model/model_name.h"
#include "model/model_summary.h"
#include "model/yolo_model.h"

namespace trainer::app {
namespace {

struct InfoOptions {
  std::vector<std::string> args;  // key=value
};

int64_t parse_int(const std::string& key, const std::string& value, int64_t min) {
  try {
    size_t used = 0;
    const int64_t v = std::stoll(value, &used);
    if (used == value.size() && v >= min) return v;
  } catch (const std::exception&) {
  }
  throw core::ConfigError(fmt::format("{}={}: expected an integer >= {}", key, value, min));
}

int run_info(const InfoOptions& opts) {
  std::string model_text = "yolo26n", weights;
  int64_t imgsz = 640, nc = 80;
  for (const auto& a : opts.args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) throw core::ConfigError("expected key=value, got '" + a + "'");
    const std::string key = a.substr(0, eq), value = a.substr(eq + 1);
    if (key == "model") {
      model_text = value;
    } else if (key == "imgsz") {
      imgsz = parse_int(key, value, 32);
    } else if (key == "nc") {
      nc = parse_int(key, value, 1);
    } else if (key == "weights") {
      weights = value;
    } else {
      throw core::ConfigError("unknown key '" + key + "' (info takes model, imgsz, nc, weights)");
    }
  }
  const engine::ModelFromWeights loaded =
      engine::model_to_describe(model_text, static_cast<int>(nc), weights);
  const model::ModelName& name = loaded.name;
  model::YoloModel model = loaded.model;
  nc = model->num_classes();
  if (engine::is_weights_file(model_text)) {
    std::cout << "weights " << model_text << " hold " << name.display() << "\n";
    if (const auto& ref = loaded.reference) {
      std::cout << fmt::format(
          "a reference checkpoint: Ultralytics {}, {}, {} of {} (epoch {}{}), {} class names\n",
          ref->version.empty() ? "?" : ref->version, ref->date.empty() ? "undated" : ref->date,
          ref->source, ref->model_class, ref->epoch, ref->epoch < 0 ? ": a finished run" : "",
          ref->names.size());
    }
  }
  if (!weights.empty()) {
    std::cout << "weights " << weights << " fit the model\n";
  }
  const auto summary = model::summarize_model(*model, imgsz);
  std::cout << model::format_summary(summary, name.display());
  std::cout << fmt::format("({} modules counting containers, the older reference's layer count)\n",
                           summary.modules);
  std::cout << fmt::format("imgsz {}, nc {}, reg_max {}, end2end {}, strides [8, 16, 32]\n", imgsz,
                           nc, model->reg_max(), model->end2end() ? "true" : "false");
  if (const auto kpt = model->keypoint_shape(); kpt.count > 0) {
    std::cout << fmt::format("kpt_shape [{}, {}]\n", kpt.count, kpt.dims);
  }
  if (const auto ref = model::reference_figures(name)) {
    std::cout << fmt::format("reference (nc=80, imgsz 640): {}{} parameters, {:.1f} GFLOPs\n",
                             ref->layers    ? fmt::format("{} layers, ", ref->layers)
                             : ref->modules ? fmt::format("{} modules, ", ref->modules)
                                            : "",
                             model::thousands(ref->parameters), ref->gflops);
  }
  return 0;
}

}  // namespace

Command register_info_command(CLI::App& app, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "print a model's layer table, parameters and GFLOPs");
  cmd->add_option("args", opts->args, "model=NAME [imgsz=640] [nc=80] [weights=FILE]");
  return {cmd, [opts] { return run_info(*opts); }};
}

}  // namespace trainer::app
