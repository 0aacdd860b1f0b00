// Everything a training run is made of, built from the config in one place.
//
// Why: `trainer fit`, `trainer bench interval` and the tests must train the same thing; building
// dataset, loader, model, loss, optimizer, schedule and EMA here keeps them from drifting apart.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "data/loader.h"
#include "distributed/gradient_reducer.h"
#include "distributed/group.h"
#include "engine/checkpoint/model_source.h"
#include "engine/device/ranks.h"
#include "engine/precision/precision_choice.h"
#include "engine/task/task_definition.h"
#include "loss/yolo_loss.h"
#include "model/model_name.h"
#include "model/yolo_model.h"
#include "optim/ema.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "optim/optimizer_choice.h"

namespace trainer::engine {

// What the run reads, fixed once built: the dataset, its splits and the training loader.
struct RunInputs {
  data::DatasetSpec dataset;
  std::shared_ptr<data::DatasetIndex> train_set;
  std::shared_ptr<data::DatasetIndex> val_set;  // null when not needed
  std::unique_ptr<data::Loader> train_loader;
};

// The network being trained and what reads or writes its parameters every step.
struct TrainedNetwork {
  model::YoloModel model{nullptr};
  std::unique_ptr<loss::YoloLoss> criterion;
  EpochColumns columns;  // the task's results columns for this model (loss item names, metrics)
  std::vector<at::Tensor> trainable;   // parameters with requires_grad (clipping)
  optim::NamedTensors live_state;      // the model's parameters and buffers by name (EMA)
  std::vector<int64_t> frozen_layers;  // `freeze`: layer indices
  std::vector<std::string> frozen;     // their parameters' names (not in the optimizer)
  // Data-parallel runs: averages the gradients over the ranks in backward.
  std::unique_ptr<distributed::GradientReducer> reducer;
};

// How the parameters move, the state a checkpoint keeps beside the weights: the optimizer and
// its schedule, and the EMA that follows them. The momentum lives in two places that mean two
// things (the reference's): `choice.momentum` is the optimizer's own (optimizer=auto may pick
// it), `schedule.momentum` the warmup's target (args.momentum); TrainStep reads them there only.
struct Optimization {
  optim::OptimizerChoice choice;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::ModelEma> ema;
  optim::ScheduleSettings schedule;  // `time` changes its epochs as the run goes
};

// A run, grouped by what changes together: the settings fixed for the run at the top, then the
// inputs, the network and the optimization.
struct TrainingContext {
  core::TrainConfig config;
  c10::Device device{c10::kCPU};
  std::unique_ptr<TaskDefinition> task;  // what the task decides (head, loss, columns, ...)
  Ranks ranks;  // data-parallel runs: the ranks' group; a single process is rank 0 of 1
  // `precision` resolved for this device and model (config.run.precision keeps what was asked,
  // `auto` included, so a checkpoint resumes under the same request).
  PrecisionDecision precision;
  model::ModelName architecture;  // what net.model was built as (fit builds its EMA copy so)

  RunInputs inputs;
  TrainedNetwork net;
  Optimization optimization;

  bool bf16() const { return precision.precision == core::Precision::kBF16; }
  int world_size() const { return ranks.world_size(); }
  bool main_rank() const { return ranks.main(); }
  int64_t batches_per_epoch() const { return optimization.schedule.batches_per_epoch; }
};

struct ContextOptions {
  bool need_val = true;
  bool show_progress = true;
  // Data-parallel: local rank 0 of each machine builds the label caches first, the others read
  // them after a barrier; rank 0's initial weights are broadcast; gradients are averaged by a
  // distributed::GradientReducer.
  Ranks ranks;
};

// The checks of a run's config that load no data: device, model name, dropout, batch over the
// `world_size` ranks, the dataset yaml (returned, parsed). Throws core::ConfigError.
data::DatasetSpec check_run_config(const core::TrainConfig& config, int world_size);

// What a run reads before it loads any data: its config checked (check_run_config, with the
// dataset yaml it parsed) and its model source (one read of a weights file). fit() reads them
// before it creates the run folder and prints the configuration, so a bad config is reported
// first and leaves nothing behind, and hands them on: each is read once per run.
struct RunSources {
  data::DatasetSpec dataset_yaml;
  ModelSource model;
};
RunSources read_run_sources(const core::TrainConfig& config, int world_size);

// Builds the context; logs the dataset summaries and the optimizer choice. Throws
// core::ConfigError / core::InputError for bad configs or data. The first form (benches, tests)
// reads the run's sources and applies the process settings itself (read_run_sources,
// apply_process_settings); fit() does both as phases of its own and passes their results.
TrainingContext build_training_context(const core::TrainConfig& config,
                                       const ContextOptions& options = {});
TrainingContext build_training_context(const core::TrainConfig& config, c10::Device device,
                                       RunSources sources, const ContextOptions& options);

// The model, parameter names as the reference's state-dict keys (parameters then buffers).
optim::NamedTensors named_state(model::YoloModelImpl& model);

// The reference's optimizer choice for `config` (optimizer: auto rules included).
optim::OptimizerChoice choose_optimizer(const core::TrainConfig& config, int64_t train_images,
                                        int nc);
// The chosen optimizer over `model`'s parameter groups, with the config's implementation settings;
// the `frozen` parameters (by name) are left out.
std::unique_ptr<optim::Optimizer> build_optimizer(const core::TrainConfig& config,
                                                  const optim::OptimizerChoice& choice,
                                                  model::YoloModelImpl& model,
                                                  const std::vector<std::string>& frozen = {});

}  // namespace trainer::engine
