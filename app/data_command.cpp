// `trainer data check DATA_YAML` (each split's summary and every problem found) and
// `trainer data preview CONFIG [key=value ...]` (augmented training batches drawn as
// train_batch0.jpg ... in a run folder).
#include <spdlog/spdlog.h>

#include <iostream>
#include <map>
#include <memory>

#include "app/commands.h"
#include "app/config_args.h"
#include "core/config_loader.h"
#include "core/run_dir.h"
#include "data/batch_plot.h"
#include "data/dataset.h"
#include "data/decode_budget.h"
#include "data/loader.h"
#include "data/loader_options.h"
#include "engine/task/task_definition.h"

namespace trainer::app {
namespace {

struct DataOptions {
  std::string yaml;
  bool no_cache = false;
  std::vector<std::string> args;  // preview: CONFIG then key=value overrides
  int batches = 3;
  int epoch = 0;
};

int run_check(const DataOptions& opts) {
  const data::DatasetSpec spec = data::load_dataset_yaml(opts.yaml);
  std::cout << "dataset: " << spec.yaml_file.string() << " (" << spec.nc() << " classes, root "
            << spec.root.string() << ")\n";
  int failures = 0;
  for (data::Split split : {data::Split::kTrain, data::Split::kVal, data::Split::kTest}) {
    const auto& paths = split == data::Split::kTrain ? spec.train
                        : split == data::Split::kVal ? spec.val
                                                     : spec.test;
    if (paths.empty()) continue;
    data::LoadOptions load;
    load.use_cache = !opts.no_cache;
    load.log = false;
    try {
      const data::DatasetIndex index = data::load_split(spec, split, load);
      std::map<int, int64_t> per_class;
      for (const auto& item : index.items) {
        for (int c : item.classes) ++per_class[c];
      }
      std::cout << data::split_name(split) << " (" << index.source
                << "): " << data::summary_line(index.stats) << ", " << per_class.size() << "/"
                << spec.nc() << " classes present" << (index.from_cache ? " (label cache)" : "")
                << "\n";
      if (index.keypoints_per_box > 0) {
        int64_t visible = 0;
        for (const auto& item : index.items) {
          for (size_t k = 2; k < item.keypoints.size(); k += 3) visible += item.keypoints[k] > 0;
        }
        std::cout << "  keypoints: " << index.keypoints_per_box << " per box, " << visible
                  << " visible of " << index.stats.boxes * index.keypoints_per_box
                  << (index.flip_idx.empty() ? ", no flip_idx (flips off in training)" : "")
                  << "\n";
      }
      for (const auto& problem : index.stats.problems) std::cout << "  " << problem << "\n";
    } catch (const core::InputError& e) {
      std::cout << data::split_name(split) << ": error: " << e.what() << "\n";
      ++failures;
    }
  }
  return failures ? 2 : 0;
}

int run_preview(const DataOptions& opts) {
  const auto [file, overrides] = split_config_args(opts.args);
  const core::LoadedConfig loaded = core::load_config(file, overrides);
  const core::TrainConfig& cfg = loaded.config;
  if (cfg.data.data.empty()) throw core::ConfigError("data preview needs 'data' (a dataset yaml)");
  const data::DatasetSpec spec = data::load_dataset_yaml(cfg.data.data);
  data::set_decode_budget_gib(cfg.data.decode_budget_gb);
  data::LoadOptions load;
  // The config's task decides what the polygons are: an OBB config (model yolo26n-obb, or
  // task: obb) draws the labels' rotated boxes, a segmentation config their masks.
  load.polygons = engine::make_task_definition(cfg)->label_polygons();
  const data::DatasetIndex index = data::load_split(spec, data::Split::kTrain, load);
  data::Loader loader(index, data::train_loader_options(cfg));
  const bool mosaic = data::mosaic_enabled(cfg, opts.epoch);
  loader.start_epoch(opts.epoch, mosaic);
  core::ClaimedRunDir claim(cfg.run);  // given back if no batch could be drawn
  const auto& dir = claim.path();
  int epoch = opts.epoch;
  for (int b = 0; b < opts.batches; ++b) {
    auto batch = loader.next();
    if (!batch) {  // a small dataset: continue with the next epoch's batches
      ++epoch;
      loader.start_epoch(epoch, data::mosaic_enabled(cfg, epoch));
      batch = loader.next();
      if (!batch) break;
    }
    const auto out = dir / ("train_batch" + std::to_string(b) + ".jpg");
    data::save_batch_plot(*batch, index.names, out);
    std::cout << out.string() << " (" << batch->images.size(0) << " images, "
              << batch->labels.size(0) << " boxes" << (mosaic ? ", mosaic" : "") << ")\n";
  }
  claim.keep();
  return 0;
}

}  // namespace

Command register_data_command(CLI::App& app, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<DataOptions>();
  CLI::App* cmd = app.add_subcommand("data", "check a dataset or preview augmented batches");
  cmd->require_subcommand(1);
  CLI::App* check = cmd->add_subcommand("check", "summary and problems of every split");
  check->add_option("data", opts->yaml, "dataset yaml")->required();
  check->add_flag("--no-cache", opts->no_cache, "neither read nor write the label cache");
  CLI::App* preview =
      cmd->add_subcommand("preview", "write augmented training batches as train_batchN.jpg");
  preview->add_option("args", opts->args, "CONFIG file, then key=value overrides");
  preview->add_option("--batches", opts->batches, "how many batches to draw")
      ->check(CLI::Range(1, 1000));
  preview->add_option("--epoch", opts->epoch, "epoch to draw (close_mosaic applies)")
      ->check(CLI::Range(0, 100000));
  return {cmd, [opts, check] { return check->parsed() ? run_check(*opts) : run_preview(*opts); }};
}

}  // namespace trainer::app
