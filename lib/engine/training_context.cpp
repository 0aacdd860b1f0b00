// See training_context.h.
#include "engine/training_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <exception>
#include <optional>

#include "core/error.h"
#include "data/loader_options.h"
#include "distributed/sync_batch_norm.h"
#include "engine/checkpoint/fine_tune.h"
#include "engine/checkpoint/model_source.h"
#include "engine/device/device.h"
#include "engine/device/memory_format.h"
#include "engine/device/process_settings.h"
#include "engine/freeze.h"
#include "engine/run_dataset.h"
#include "engine/static_step/cuda_graph_config.h"
#include "model/model_name.h"
#include "model/weights_io.h"
#include "optim/optimizer_kind.h"
#include "optim/param_groups.h"

namespace trainer::engine {

optim::NamedTensors named_state(model::YoloModelImpl& model) {
  optim::NamedTensors out;
  for (const auto& p : model.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : model.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

optim::OptimizerChoice choose_optimizer(const core::TrainConfig& config, int64_t train_images,
                                        int nc) {
  optim::OptimizerRequest r;
  const std::optional<optim::OptimizerKind> kind =
      optim::optimizer_kind_from_name(config.optim.optimizer);
  if (!kind) {
    throw core::ConfigError(fmt::format("optimizer: '{}' is not one of auto, MuSGD, SGD, AdamW",
                                        config.optim.optimizer));
  }
  r.kind = *kind;
  r.lr0 = config.optim.lr0;
  r.momentum = config.optim.momentum;
  r.warmup_bias_lr = config.schedule.warmup_bias_lr;
  r.weight_decay = config.optim.weight_decay;
  r.batch = config.data.batch;
  r.nbs = config.optim.nbs;
  r.epochs = config.schedule.epochs;
  r.train_images = train_images;
  r.num_classes = nc;
  return optim::choose_optimizer(r);
}

namespace {

optim::MuonSchedule muon_schedule_of(core::OptimizerImpl impl) {
  switch (impl) {
    case core::OptimizerImpl::kScalar:
      return optim::MuonSchedule::kScalar;
    case core::OptimizerImpl::kBatched:
      return optim::MuonSchedule::kBatched;
    case core::OptimizerImpl::kPadded:
      return optim::MuonSchedule::kPadded;
  }
  return optim::MuonSchedule::kPadded;
}

optim::EmaSchedule ema_schedule_of(core::EmaImpl impl) {
  return impl == core::EmaImpl::kScalar ? optim::EmaSchedule::kScalar
                                        : optim::EmaSchedule::kForeach;
}

}  // namespace

std::unique_ptr<optim::Optimizer> build_optimizer(const core::TrainConfig& config,
                                                  const optim::OptimizerChoice& choice,
                                                  model::YoloModelImpl& model,
                                                  const std::vector<std::string>& frozen) {
  optim::GroupingOptions grouping;
  grouping.use_muon = optim::uses_muon_groups(choice.kind);
  grouping.lr = choice.lr;
  grouping.momentum = choice.momentum;
  grouping.weight_decay = choice.weight_decay;
  grouping.head_prefix = fmt::format("model.{}.", model.layer_modules().size() - 1);
  grouping.excluded.insert(frozen.begin(), frozen.end());
  optim::OptimizerOptions o;
  o.foreach = config.optim.impl != core::OptimizerImpl::kScalar;
  o.musgd.muon_gain = config.optim.muon_gain;
  o.musgd.sgd_gain = config.optim.sgd_gain;
  o.musgd.ns.steps = static_cast<int>(config.optim.ns_steps);
  for (int k = 0; k < 3; ++k) o.musgd.ns.coefficients[k] = config.optim.ns_coefficients[k];
  o.musgd.ns.dtype = config.optim.ns_dtype == core::NsDtype::kBF16 ? at::kBFloat16 : at::kFloat;
  o.musgd.schedule = muon_schedule_of(config.optim.impl);
  o.adamw.beta1 = choice.momentum;
  return optim::make_optimizer(choice.kind, optim::build_param_groups(model, grouping), o);
}

namespace {

std::unique_ptr<data::Loader> make_train_loader(const data::DatasetIndex& train_set,
                                                const core::TrainConfig& config, int rank,
                                                int world_size, bool show_progress) {
  auto loader_options = data::train_loader_options(config, rank, world_size);
  loader_options.show_progress = show_progress;
  return std::make_unique<data::Loader>(train_set, loader_options);
}

}  // namespace

data::DatasetSpec check_run_config(const core::TrainConfig& config, int world_size) {
  const c10::Device device = resolve_device(config.run.device);
  if (!is_weights_file(config.model.model))
    model::require_builtin_model(model::parse_model_name(config.model.model));
  (void)model::parse_class_widths(config.model.cls_width);
  if (config.model.dropout > 0.0) {
    throw core::ConfigError(fmt::format(
        "dropout: {:g} applies to classification heads only (the reference uses it for classify "
        "models); detect and pose models have no dropout layer: leave it at 0",
        config.model.dropout));
  }
  if (config.run.static_shapes && (config.data.rect || config.augment.multi_scale > 0.0)) {
    throw core::ConfigError(fmt::format(
        "static_shapes: {} gives batches of different image sizes, so the step's shapes would "
        "change; turn one of them off",
        config.data.rect ? "rect: true" : "multi_scale"));
  }
  check_cuda_graph_config(config, device, world_size);
  if (config.data.batch % world_size != 0) {
    throw core::ConfigError(fmt::format(
        "batch: {} is the global batch and does not divide among the {} ranks (WORLD_SIZE); each "
        "rank trains batch / WORLD_SIZE images: use a multiple of {}",
        config.data.batch, world_size, world_size));
  }
  return data::load_dataset_yaml(config.data.data);
}

namespace {

// Fine-tuning as 8.4.190's trainer (engine/checkpoint/fine_tune.h), logged as the reference logs
// it; the built model's class widths go into ctx.architecture (the run records them from there:
// engine/run_decisions.h).
model::YoloModel transfer_pretrained(TrainingContext& ctx, ModelSource& source) {
  const WeightsSource pretrained =
      source.pretrained ? std::move(*source.pretrained) : read_weights_source(source.weights);
  source.pretrained.reset();
  FineTuned tuned = fine_tune_model(*ctx.task, source.name, ctx.inputs.dataset, pretrained,
                                    ctx.config.model.cls_remap);
  ctx.architecture.cls_width = tuned.class_widths;
  if (tuned.rebuilt) {
    spdlog::info(
        "class branches rebuilt at the hidden width of {} (the source's), recorded as "
        "cls_width: {}",
        source.weights.string(), model::class_widths_text(tuned.class_widths));
  }
  const model::FineTuneReport& report = tuned.report;
  if (report.remapped > 0) {
    spdlog::info("Remapped {}/{} cls head rows from pretrained weights by class name ({} tensors)",
                 report.matched_classes, ctx.inputs.dataset.nc(), report.remapped);
  } else if (ctx.config.model.cls_remap && pretrained.names.empty()) {
    spdlog::info(
        "cls_remap: the classes {} was trained on are unknown (its dataset yaml is not "
        "readable here): no class rows matched by name",
        source.weights.string());
  }
  if (report.first_conv_filled) {
    spdlog::info("model.0.conv.weight filled from the source's filters (its shape differs)");
  }
  spdlog::info("Transferred {}/{} items from pretrained weights ({})", report.transferred,
               report.total, source.weights.string());
  if (!report.kept_initialised.empty()) {
    spdlog::info("  kept initialised: {}", fmt::join(report.kept_initialised, ", "));
  }
  return tuned.model;
}

// Phase 1: the task, the device (apply_process_settings made it current and seeded the
// generators before anything allocates or draws a number) and the ranks.
void start_run(TrainingContext& ctx, const core::TrainConfig& config, c10::Device device,
               const ContextOptions& options) {
  ctx.config = config;
  ctx.task = make_task_definition(config);  // first: an unknown task fails before any work
  ctx.device = device;
  ctx.ranks = options.ranks;
}

// Phase 2: the splits and the training loader. Label caches: local rank 0 writes them, the others
// wait and then read them (the reference's torch_distributed_zero_first); every rank passes the
// barrier exactly once.
RunInputs load_inputs(const core::TrainConfig& config, const data::DatasetSpec& yaml_spec,
                      const ContextOptions& options) {
  distributed::Group* group = options.ranks.group.get();
  const int rank = options.ranks.rank();
  const int world_size = options.ranks.world_size();
  RunInputs inputs;
  distributed::run_local_rank_zero_first(group, options.ranks.first_on_machine(), [&] {
    inputs.train_set = std::make_shared<data::DatasetIndex>(
        load_run_split(config, yaml_spec, data::Split::kTrain));
    if (options.need_val) {
      inputs.val_set = std::make_shared<data::DatasetIndex>(
          load_run_split(config, yaml_spec, data::Split::kVal));
    }
    // cache: disk files too: local rank 0 writes them, the others find them valid and reuse them
    // (each rank builds its own RAM cache, so that one stays outside the barrier).
    if (config.data.cache == core::CacheMode::kDisk) {
      inputs.train_loader =
          make_train_loader(*inputs.train_set, config, rank, world_size, options.show_progress);
    }
  });
  inputs.dataset = run_dataset_spec(config, yaml_spec);
  if (!inputs.train_loader) {
    inputs.train_loader =
        make_train_loader(*inputs.train_set, config, rank, world_size, options.show_progress);
  }
  return inputs;
}

// Phase 3: the model, from scratch or fine-tuned from the source's weights (a resume loads its
// own later), on the device in training mode, with rank 0's initial weights on every rank.
void build_model(TrainingContext& ctx, ModelSource source) {
  const core::TrainConfig& config = ctx.config;
  if (!source.architecture.empty()) {
    spdlog::info("model: {} from {}", source.name.display(), source.architecture.string());
  }
  ctx.architecture = source.name;
  ctx.architecture.cls_width = model::parse_class_widths(config.model.cls_width);
  if (config.run.resume.empty() && !source.weights.empty()) {
    ctx.net.model = transfer_pretrained(ctx, source);  // the source may set its class widths
  } else {
    ctx.net.model = ctx.task->build_model(source.name, ctx.inputs.dataset);
  }
  if (config.run.resume.empty() && source.weights.empty() && config.model.pretrained == "true" &&
      !is_weights_file(config.model.model)) {
    spdlog::info(
        "pretrained: true, but {} has no weights file here (no downloads): training from "
        "scratch; give pretrained=PATH or model=PATH.pt to fine-tune",
        source.name.display());
  }
  ctx.net.model->to(ctx.device);
  apply_memory_format(*ctx.net.model, model_memory_format(config, ctx.device));
  ctx.net.model->train();
  if (ctx.ranks.group) {  // rank 0's initial weights everywhere (per-rank seeds would differ)
    std::vector<at::Tensor> state;
    for (const auto& [name, tensor] : named_state(*ctx.net.model)) state.push_back(tensor);
    ctx.ranks.group->broadcast(state, 0);
  }
}

// Phase 5: what touches the parameters: synchronised BatchNorm, `freeze`, the trainable list and
// (data-parallel) the gradient reducer.
void prepare_parameters(TrainingContext& ctx) {
  const core::TrainConfig& config = ctx.config;
  TrainedNetwork& net = ctx.net;
  const int world_size = ctx.world_size();
  if (config.run.sync_bn && world_size > 1) {
    std::shared_ptr<distributed::Group> group = ctx.ranks.group;
    const int64_t layers = model::set_batch_norm_override(
        *net.model, [group](torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x) {
          return distributed::sync_batch_norm(x, bn, *group);
        });
    spdlog::info("sync_bn: {} BatchNorm layers take their batch statistics over all {} ranks",
                 layers, world_size);
  }
  net.frozen_layers = frozen_layer_indices(config.model.freeze,
                                           static_cast<int64_t>(net.model->layer_modules().size()));
  net.frozen = freeze_layers(*net.model, net.frozen_layers);
  if (!net.frozen.empty()) {
    spdlog::info("freeze: layers [{}] ({} parameters, BatchNorm statistics kept): {}",
                 fmt::join(net.frozen_layers, ", "), net.frozen.size(),
                 fmt::join(net.frozen, ", "));
  }
  std::vector<std::string> trainable_names;
  for (const auto& p : net.model->named_parameters()) {
    if (!p.value().requires_grad()) continue;
    net.trainable.push_back(p.value());
    trainable_names.push_back(p.key());
  }
  if (world_size > 1) {
    distributed::ReducerOptions reducer_options;
    switch (config.run.dist_find_unused) {
      case core::UnusedDetection::kAuto:
        if (!ctx.task->loss_reaches_every_parameter()) {
          reducer_options.unused = distributed::UnusedParameters::kDetect;
          spdlog::info(
              "data-parallel: unused-parameter detection every step (a {} batch without "
              "objects leaves some parameters without a gradient)",
              core::task_name(ctx.task->task()));
        }
        break;
      case core::UnusedDetection::kEveryStep:
        reducer_options.unused = distributed::UnusedParameters::kDetect;
        spdlog::info("data-parallel: unused-parameter detection every step (dist_find_unused)");
        break;
      case core::UnusedDetection::kNever:
        reducer_options.unused = distributed::UnusedParameters::kNone;
        spdlog::info("data-parallel: no unused-parameter detection (dist_find_unused: false)");
        break;
    }
    net.reducer = std::make_unique<distributed::GradientReducer>(*ctx.ranks.group, net.trainable,
                                                                 trainable_names, reducer_options);
    spdlog::info("data-parallel: {} ranks ({}), batch {} per rank, {} gradient buckets", world_size,
                 distributed::backend_name(ctx.ranks.group->backend()),
                 config.data.batch / world_size, net.reducer->buckets());
  }
}

// Phase 7: optimizer (the reference's choice), EMA and the schedule.
Optimization build_optimization(TrainingContext& ctx) {
  const core::TrainConfig& config = ctx.config;
  Optimization o;
  o.choice = choose_optimizer(config, static_cast<int64_t>(ctx.inputs.train_set->size()),
                              ctx.inputs.dataset.nc());
  o.optimizer = build_optimizer(config, o.choice, *ctx.net.model, ctx.net.frozen);
  const auto& c = o.choice;
  spdlog::info("optimizer: {}{} lr={:g} momentum={:g} weight_decay={:g} ({} groups, {} impl)",
               optim::optimizer_kind_name(c.kind), c.auto_chosen ? " (auto)" : "", c.lr, c.momentum,
               c.weight_decay, o.optimizer->groups().size(),
               optim::muon_schedule_name(muon_schedule_of(config.optim.impl)));
  o.ema = std::make_unique<optim::ModelEma>(ctx.net.live_state, config.ema.decay, config.ema.tau,
                                            ema_schedule_of(config.ema.impl));
  o.schedule.epochs = config.schedule.epochs;
  o.schedule.batches_per_epoch = ctx.inputs.train_loader->batches_per_epoch();
  o.schedule.warmup_epochs = config.schedule.warmup_epochs;
  o.schedule.warmup_momentum = config.schedule.warmup_momentum;
  o.schedule.warmup_bias_lr = c.warmup_bias_lr;
  o.schedule.momentum = config.optim.momentum;
  o.schedule.lrf = config.schedule.lrf;
  o.schedule.cos_lr = config.schedule.cos_lr;
  o.schedule.nbs = config.optim.nbs;
  o.schedule.batch = config.data.batch;
  return o;
}

}  // namespace

RunSources read_run_sources(const core::TrainConfig& config, int world_size) {
  RunSources sources;
  sources.dataset_yaml = check_run_config(config, world_size);  // first: no weights file read
  sources.model = read_model_source(config);
  return sources;
}

TrainingContext build_training_context(const core::TrainConfig& config,
                                       const ContextOptions& options) {
  RunSources sources = read_run_sources(config, options.ranks.world_size());
  const c10::Device device = apply_process_settings(config);
  return build_training_context(config, device, std::move(sources), options);
}

TrainingContext build_training_context(const core::TrainConfig& config, c10::Device device,
                                       RunSources sources, const ContextOptions& options) {
  TrainingContext ctx;
  start_run(ctx, config, device, options);
  ctx.inputs = load_inputs(config, sources.dataset_yaml, options);
  build_model(ctx, std::move(sources.model));
  // Phase 4: the precision, decided on the built model (`auto` counts its FLOPs and checks it).
  ctx.precision = choose_precision(config.run.precision, *ctx.net.model, ctx.device,
                                   config.data.imgsz, ctx.ranks.group.get());
  spdlog::info("{}", ctx.precision.reason);
  prepare_parameters(ctx);
  // Phase 6: the task's loss and results columns for this model.
  ctx.net.criterion = ctx.task->build_loss(config.loss, *ctx.net.model, ctx.inputs.dataset);
  if (config.run.static_shapes && !ctx.net.criterion->supports_static_shapes()) {
    throw core::ConfigError(
        fmt::format("static_shapes: not implemented for the {} loss; leave it false",
                    core::task_name(ctx.task->task())));
  }
  if (config.run.static_shapes) {
    spdlog::info(
        "static_shapes: targets padded to max_instances {} per sample, every batch of {} images",
        config.data.max_instances, config.data.batch / ctx.world_size());
  }
  ctx.net.columns = ctx.task->columns(*ctx.net.model);
  ctx.net.live_state = named_state(*ctx.net.model);
  ctx.optimization = build_optimization(ctx);
  return ctx;
}

}  // namespace trainer::engine
