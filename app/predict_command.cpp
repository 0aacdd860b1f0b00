// `trainer predict weights=PATH source=PATH [key=value ...]`: runs a model on images, folders,
// globs, .txt lists or videos and writes annotated copies (and labels / predictions.json) into
// runs/<task>/predict*.
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/usage.h"
#include "engine/checkpoint/weights_source.h"
#include "predict/predict_options.h"
#include "predict/predict_run.h"

namespace trainer::app {
namespace {

// weights= and source= are what predict cannot run without: missing, they are usage errors.
void require_weights_and_source(const std::vector<std::string>& args) {
  const auto given = [&](const std::string& key) {
    for (const auto& a : args) {
      if (a.rfind(key + "=", 0) == 0 && a.size() > key.size() + 1) return true;
    }
    return false;
  };
  const auto weights_in_model = [&] {  // model=best.pt names the weights, as in `val`
    for (const auto& a : args) {
      if (a.rfind("model=", 0) != 0) continue;
      if (engine::is_weights_file(a.substr(6))) return true;
    }
    return false;
  };
  const bool weights = given("weights") || weights_in_model(), source = given("source");
  if (weights && source) return;
  const std::string missing = !weights && !source ? "a weights file and a source"
                              : !weights          ? "a weights file"
                                                  : "a source";
  throw UsageError("trainer predict needs " + missing +
                       ": give weights=PATH (.pt or .ckpt) and source=PATH (an image, folder, "
                       "glob, .txt list or video)",
                   {"trainer predict",
                    "trainer predict weights=PATH source=PATH [key=value ...]",
                    {"trainer predict weights=runs/demo/shapes/weights/best.pt "
                     "source=data/generated/shapes/images/val"}});
}

}  // namespace

Command register_predict_command(CLI::App& app, const GlobalOptions& /*global*/) {
  auto args = std::make_shared<std::vector<std::string>>();
  CLI::App* cli =
      app.add_subcommand("predict", "predict boxes (and keypoints) on images or videos");
  cli->add_option("args", *args,
                  "key=value: weights=PATH (.pt or .ckpt) source=PATH (image, folder, glob, .txt, "
                  "video), imgsz=640 conf=0.25 iou=0.7 max_det=300 device= batch=1 save=true "
                  "save_txt=false save_conf=false save_json=false project= name=predict "
                  "exist_ok=false line_width= vid_stride=1 half=false nms= agnostic_nms=false; "
                  "model=NAME data=DATA_YAML for weights outside a run folder");
  return {cli, [args] {
            require_weights_and_source(*args);
            predict::run_predict(predict::parse_predict_args(*args), std::cout);
            return 0;
          }};
}

}  // namespace trainer::app
