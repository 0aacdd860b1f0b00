// `trainer fit [CONFIG] [key=value ...]`: trains a model; `resume=RUN/weights/last.ckpt` continues
// a run exactly where its last checkpoint left it.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/config_args.h"
#include "engine/trainer.h"

namespace trainer::app {

Command register_fit_command(CLI::App& app, const GlobalOptions& /*global*/) {
  struct Options {
    std::vector<std::string> args;
    bool per_class = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cli = app.add_subcommand("fit", "train a detector or pose model from a YAML config");
  cli->add_option("args", opts->args, "CONFIG (a yaml file) then key=value overrides");
  cli->add_flag("--per-class", opts->per_class, "print the per-class table after the last epoch");
  return {cli, [opts] {
            const auto [file, overrides] = split_config_args(opts->args);
            const core::TrainConfig config = engine::load_fit_config(file, overrides);
            engine::FitOptions fit_options;
            fit_options.interactive = ::isatty(STDERR_FILENO) != 0;
            fit_options.per_class = opts->per_class;
            const auto result = engine::fit(config, fit_options);
            std::cout << "run folder: " << result.run_dir.string() << "\n";
            if (result.last_validation) {
              const auto& m = result.last_validation->metric;
              std::cout << "final (EMA) mAP50-95 " << m.map50_95 << ", mAP50 " << m.map50;
              if (result.last_validation->coco) {
                std::cout << ", COCO AP " << result.last_validation->coco->stats[0];
              }
              if (const auto& pose = result.last_validation->pose_metric) {
                std::cout << "; pose mAP50-95 " << pose->map50_95 << ", mAP50 " << pose->map50;
              }
              if (const auto& kp = result.last_validation->coco_keypoints) {
                std::cout << ", COCO keypoint AP " << kp->stats[0];
              }
              std::cout << "\n";
            }
            return 0;
          }};
}

}  // namespace trainer::app
