// `trainer fit [CONFIG] [key=value ...]`: trains a model; `resume=RUN/weights/last.ckpt` continues
// a run exactly where its last checkpoint left it. Data-parallel: under torchrun (WORLD_SIZE > 1)
// this process is one rank and joins the group; with a device list (device=0,1 or cpu,cpu) and
// no torchrun around it, it starts one rank per device itself and waits for them.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/config_args.h"
#include "app/usage.h"
#include "core/error.h"
#include "engine/checkpoint/fit_start.h"
#include "engine/device/rank_setup.h"
#include "engine/trainer.h"

namespace trainer::app {
namespace {

Usage fit_usage() {
  return {
      "trainer fit",
      "trainer fit [CONFIG] [key=value ...]  (CONFIG: a yaml of keys, data= the dataset yaml)",
      {"trainer fit model=yolo26n data=path/to/data.yaml epochs=10 imgsz=640",
       "trainer fit configs/demo.yaml epochs=3  (its data: trainer synth data/generated/shapes)",
       "scripts/demo.sh  (a first run: generates the demo dataset and trains on it)"}};
}

// Training needs a dataset; without one, say so and how to give it, before anything is printed.
void require_dataset(const core::TrainConfig& config, const std::string& file) {
  if (!config.data.data.empty()) return;
  throw UsageError(file.empty() ? "trainer fit needs a dataset: give a CONFIG that sets data:, or "
                                  "data=DATA_YAML"
                                : "trainer fit needs a dataset: " + file +
                                      " sets no data:; add it there, or give data=DATA_YAML",
                   fit_usage());
}

}  // namespace

Command register_fit_command(CLI::App& app, const GlobalOptions& /*global*/) {
  struct Options {
    std::vector<std::string> args;
    bool per_class = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cli = app.add_subcommand(
      "fit", "train a YOLO model (detect, pose, segment, obb) from a YAML config");
  cli->add_option("args", opts->args, "CONFIG (a yaml file) then key=value overrides");
  cli->add_flag("--per-class", opts->per_class, "print the per-class table after the last epoch");
  return {cli, [opts] {
            const auto [file, overrides] = split_config_args(opts->args);
            // A rank under torchrun may lack resume='s file (no shared file system): the ranks
            // agree on the checkpoint after joining, and a restarted attempt finds its run.
            const bool launched_rank = engine::read_launch_env().world_size > 1;
            const core::TrainConfig loaded = engine::load_fit_config(
                file, overrides, /*checkpoint_may_be_elsewhere=*/launched_rank);
            if (!launched_rank) require_dataset(loaded, file);
            if (const auto status = engine::launch_listed_ranks(loaded)) return *status;
            const engine::RankSetup joined = engine::join_ranks(loaded);
            const engine::Ranks& ranks = joined.ranks;
            engine::FitStart start = engine::agree_fit_start(
                ranks.group.get(), joined.records.get(), loaded, file, overrides);
            require_dataset(start.config, file);
            engine::FitOptions fit_options;
            fit_options.resume_checkpoint = std::move(start.checkpoint);
            fit_options.restart_dir = start.restart_dir;
            fit_options.run_id = start.run_id;
            fit_options.records = joined.records;
            fit_options.interactive = ::isatty(STDERR_FILENO) != 0;
            fit_options.per_class = opts->per_class;
            fit_options.ranks = ranks;
            fit_options.hooks = engine::fault_hooks_from_environment(ranks.rank());
            const auto result = engine::fit(start.config, fit_options);
            if (!ranks.main()) return 0;
            std::cout << "run folder: " << result.run_dir.string() << "\n";
            if (result.last_validation) {
              const auto& m = result.last_validation->metric;
              std::cout << "final (EMA) mAP50-95 " << m.map50_95 << ", mAP50 " << m.map50;
              if (result.last_validation->coco) {
                std::cout << ", COCO AP " << result.last_validation->coco->stats[0];
              }
              const auto& val = *result.last_validation;
              if (val.second_metric) {  // pose: keypoints, segmentation: masks
                std::cout << "; " << val.second_name << " mAP50-95 " << val.second_metric->map50_95
                          << ", mAP50 " << val.second_metric->map50;
              }
              if (val.second_coco) {
                std::cout << ", COCO " << val.second_coco_name << " AP "
                          << val.second_coco->stats[0];
              }
              std::cout << "\n";
            }
            return 0;
          }};
}

}  // namespace trainer::app
