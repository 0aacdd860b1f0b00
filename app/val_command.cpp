// `trainer val CONFIG weights=PATH [key=value ...]`: scores weights on the validation split with
// both metrics, prints speed, and writes predictions.json (COCO results form). Under torchrun
// (WORLD_SIZE > 1), or with a device list (device=0,1 or cpu,cpu: one rank per device started
// here), the ranks score the batches in turn and rank 0 prints and writes what one process would
// (engine/validation_shards.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/config_args.h"
#include "app/usage.h"
#include "core/config_loader.h"
#include "core/error.h"
#include "core/run_dir.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "engine/checkpoint/model_from_weights.h"
#include "engine/checkpoint/recorded_arguments.h"
#include "engine/checkpoint/weights_source.h"
#include "engine/device/device.h"
#include "engine/device/memory_format.h"
#include "engine/device/rank_setup.h"
#include "engine/run_dataset.h"
#include "engine/task/task_definition.h"
#include "engine/validator.h"
#include "eval/coco_eval.h"
#include "model/model_name.h"

namespace trainer::app {
namespace {

// Whether the config names a model of its own (model= given, or a config file's model: that is
// not the default), which then wins over what the weights record.
bool names_model(const std::vector<std::string>& overrides, const core::TrainConfig& config) {
  for (const auto& o : overrides) {
    if (o.rfind("model=", 0) == 0) return true;
  }
  return config.model.model != core::TrainConfig{}.model.model;
}

Usage val_usage() {
  return {"trainer val",
          "trainer val [CONFIG] weights=PATH [key=value ...]  (PATH: a .pt, or a run's .ckpt)",
          {"trainer val configs/demo.yaml weights=runs/demo/shapes/weights/best.pt",
           "trainer val data=path/to/data.yaml model=yolo26n weights=path/to/best.pt imgsz=640"}};
}

// Scoring needs weights (a freshly initialised model scores nothing); refused before any work,
// with what to give.
void require_weights(const core::TrainConfig& config, const std::string& weights) {
  if (weights.empty() && !engine::is_weights_file(config.model.model)) {
    throw UsageError(
        "trainer val needs a weights file: give weights=PATH (a .pt weights file or a .ckpt "
        "checkpoint, e.g. a run's weights/best.pt), or model=PATH.pt",
        val_usage());
  }
}

// ... and a dataset, given or recorded by the weights' run.
void require_dataset(const core::TrainConfig& config) {
  if (config.data.data.empty()) {
    throw UsageError(
        "trainer val needs a dataset: give a CONFIG that sets data:, or data=DATA_YAML (weights "
        "whose run recorded its dataset need neither)",
        val_usage());
  }
}

// The keys the user set: on the command line, or (as far as the resolved config shows) in the
// config file, where a value other than the default counts as set.
std::set<std::string> keys_given(const std::vector<std::string>& overrides,
                                 const core::TrainConfig& config) {
  std::set<std::string> given;
  for (const auto& o : overrides) given.insert(o.substr(0, o.find('=')));
  const core::TrainConfig defaults;
  if (config.data.data != defaults.data.data) given.insert("data");
  if (config.data.imgsz != defaults.data.imgsz) given.insert("imgsz");
  if (config.data.single_cls != defaults.data.single_cls) given.insert("single_cls");
  return given;
}

}  // namespace

Command register_val_command(CLI::App& app, const GlobalOptions& /*global*/) {
  struct Options {
    std::vector<std::string> args;
    bool per_class = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cli = app.add_subcommand("val", "validate weights on the val split (both metrics)");
  cli->add_option("args", opts->args,
                  "CONFIG then key=value overrides; weights=PATH (a .pt weights file or a .ckpt "
                  "checkpoint; required unless model= names one)");
  cli->add_flag("--per-class", opts->per_class, "print one row per class");
  return {cli, [opts] {
            std::string weights;  // not a config key: the one argument only `val` takes
            std::vector<std::string> args;
            for (const auto& a : opts->args) {
              if (a.rfind("weights=", 0) == 0) {
                weights = a.substr(8);
              } else {
                args.push_back(a);
              }
            }
            const auto [file, overrides] = split_config_args(args);
            auto config = core::load_config(file, overrides).config;
            require_weights(config, weights);
            if (weights.empty()) weights = config.model.model;  // model=RUN/weights/best.pt
            const engine::WeightsSource source = engine::read_weights_source(weights);
            // As the reference: the dataset, image size and single_cls of the weights' run, unless
            // given.
            const engine::RecordedArguments recorded = engine::recorded_arguments(source);
            const auto taken =
                engine::adopt_recorded_arguments(recorded, keys_given(overrides, config), config);
            if (!taken.empty()) spdlog::info("from {}: {}", recorded.source, fmt::join(taken, " "));
            require_dataset(config);
            if (const auto status = engine::launch_listed_ranks(config)) return *status;
            const engine::RankSetup joined = engine::join_ranks(config);
            const engine::Ranks& ranks = joined.ranks;
            config.run.device = ranks.device(config.run.device);
            if (config.run.name == "train") config.run.name = "val";
            const model::ModelName name =
                engine::adopt_weights_architecture(source, names_model(overrides, config), config);
            const auto task = engine::make_task_definition(name.task);
            const auto device = engine::resolve_device(config.run.device);
            if (config.run.deterministic) engine::ensure_cublas_workspace_config();
            engine::use_device(device);
            const auto yaml_spec = data::load_dataset_yaml(config.data.data);
            auto val_set = std::make_shared<data::DatasetIndex>(
                engine::load_run_split(config, yaml_spec, data::Split::kVal));
            const auto spec = engine::run_dataset_spec(config, yaml_spec);
            // Standalone scoring is fp32 unless bf16 is asked for (the reference's `val` has
            // half=False; from_config leaves `auto` at fp32); during fit, validation follows the
            // training precision.
            auto vo = engine::ValidationOptions::from_config(config);
            vo.keep_detections = true;
            // As the reference does before validating: BN folded into the convs and only the
            // head branch the postprocess decodes (no val loss here).
            auto fused =
                engine::inference_copy(*engine::build_from_weights(source, name, spec).model,
                                       device, vo.predict.use_one2many);
            engine::apply_memory_format(*fused, engine::model_memory_format(config, device));
            engine::Validator validator(val_set, spec, config, device, /*standalone=*/true,
                                        ranks.group);
            const auto started = std::chrono::steady_clock::now();
            const auto result = validator.run(*fused, nullptr, vo);
            const double wall_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            if (!result.scored) return 0;  // another rank's share: rank 0 reports
            const auto run_dir = core::create_run_dir(config.run);
            task->write_predictions(result, spec.names, run_dir / "predictions.json");
            std::cout << task->validation_table(result, spec.names, opts->per_class);
            if (result.coco) std::cout << eval::format_coco_summary(*result.coco);
            if (result.second_coco) std::cout << eval::format_coco_summary(*result.second_coco);
            std::cout << fmt::format(
                "Speed: {:.1f} ms preprocess, {:.1f} ms inference, {:.1f} ms postprocess per "
                "image ({} images, {})\n",
                result.preprocess_ms, result.inference_ms, result.postprocess_ms, result.images,
                device.str());
            std::cout << fmt::format("Validation: {:.2f} s wall on {} rank(s)\n", wall_s,
                                     ranks.world_size());
            std::cout << "predictions: " << (run_dir / "predictions.json").string() << "\n";
            return 0;
          }};
}

}  // namespace trainer::app
