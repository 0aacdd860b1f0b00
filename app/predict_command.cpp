// `trainer predict weights=PATH source=PATH [key=value ...]`: runs a model on images, folders,
// globs, .txt lists or videos and writes annotated copies (and labels / predictions.json) into
// runs/<task>/predict*.
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "predict/predict_options.h"
#include "predict/predict_run.h"

namespace trainer::app {

Command register_predict_command(CLI::App& app, const GlobalOptions& /*global*/) {
  auto args = std::make_shared<std::vector<std::string>>();
  CLI::App* cli =
      app.add_subcommand("predict", "predict boxes (and keypoints) on images or videos");
  cli->add_option("args", *args,
                  "key=value: weights=PATH (.pt or .ckpt) source=PATH (image, folder, glob, .txt, "
                  "video), imgsz=640 conf=0.25 iou=0.7 max_det=300 device= batch=1 save=true "
                  "save_txt=false save_conf=false save_json=false project= name=predict "
                  "exist_ok=false line_width= vid_stride=1 half=false nms= agnostic_nms=false; "
                  "model=NAME data=DATA_YAML for weights outside a run folder")
      ->required();
  return {cli, [args] {
            predict::run_predict(predict::parse_predict_args(*args), std::cout);
            return 0;
          }};
}

}  // namespace trainer::app
