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
#include "engine/freeze.h"
#include "engine/run_dataset.h"
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
  o.musgd.schedule =
      config.optim.impl == core::OptimizerImpl::kScalar    ? optim::MuonSchedule::kScalar
      : config.optim.impl == core::OptimizerImpl::kBatched ? optim::MuonSchedule::kBatched
                                                           : optim::MuonSchedule::kPadded;
  o.adamw.beta1 = choice.momentum;
  return optim::make_optimizer(choice.kind, optim::build_param_groups(model, grouping), o);
}

namespace {

void make_train_loader(TrainingContext& ctx, const core::TrainConfig& config,
                       const ContextOptions& options) {
  const int rank = ctx.group ? ctx.group->rank() : options.rank;
  const int world_size = ctx.group ? ctx.group->size() : options.world_size;
  auto loader_options = data::train_loader_options(config, rank, world_size);
  loader_options.show_progress = options.show_progress;
  ctx.train_loader = std::make_unique<data::Loader>(*ctx.train_set, loader_options);
}

}  // namespace

data::DatasetSpec check_run_config(const core::TrainConfig& config, int world_size) {
  (void)resolve_device(config.run.device);
  if (!is_weights_file(config.model.model)) (void)model::parse_model_name(config.model.model);
  (void)model::parse_class_widths(config.model.cls_width);
  if (config.model.dropout > 0.0) {
    throw core::ConfigError(fmt::format(
        "dropout: {:g} applies to classification heads only (the reference uses it for classify "
        "models); detect and pose models have no dropout layer: leave it at 0",
        config.model.dropout));
  }
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
// it; a rebuilt class width goes into ctx.config (cls_width), so checkpoints and args.yaml record
// it.
void transfer_pretrained(TrainingContext& ctx, const ModelSource& source) {
  const PretrainedWeights pretrained = read_pretrained(source.weights);
  FineTuned tuned =
      fine_tune_model(*ctx.task, source.name, ctx.dataset, pretrained, ctx.config.model.cls_remap);
  ctx.model = tuned.model;
  ctx.config.model.cls_width = tuned.cls_width;
  if (tuned.rebuilt) {
    spdlog::info(
        "class branches rebuilt at the hidden width of {} (the source's), recorded as "
        "cls_width: {}",
        source.weights.string(), tuned.cls_width);
  }
  const model::FineTuneReport& report = tuned.report;
  if (report.remapped > 0) {
    spdlog::info("Remapped {}/{} cls head rows from pretrained weights by class name ({} tensors)",
                 report.matched_classes, ctx.dataset.nc(), report.remapped);
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
}

}  // namespace

TrainingContext build_training_context(const core::TrainConfig& config,
                                       const ContextOptions& options) {
  TrainingContext ctx;
  ctx.config = config;
  ctx.task = make_task_definition(config);  // first: an unimplemented task fails before any work
  ctx.device = resolve_device(config.run.device);
  seed_everything(config.run.seed, config.run.deterministic);  // before any cuBLAS call
  use_device(ctx.device);                                      // before the loader pins memory
  if (ctx.device.is_cuda()) set_cudnn_benchmark(config.run.cudnn_benchmark);

  ctx.group = options.group;
  const int world_size = ctx.group ? ctx.group->size() : options.world_size;
  const data::DatasetSpec yaml_spec = check_run_config(config, world_size);
  {
    // Label caches: local rank 0 writes them, the others wait and then read them (the reference's
    // torch_distributed_zero_first); every rank passes the barrier exactly once.
    const bool first = options.local_rank == 0;
    if (ctx.group && !first) ctx.group->barrier();
    std::exception_ptr failure;  // local rank 0 passes the barrier even when it fails
    try {
      ctx.train_set = std::make_shared<data::DatasetIndex>(
          load_run_split(config, yaml_spec, data::Split::kTrain));
      if (options.need_val) {
        ctx.val_set = std::make_shared<data::DatasetIndex>(
            load_run_split(config, yaml_spec, data::Split::kVal));
      }
      // cache: disk files too: local rank 0 writes them, the others find them valid and reuse them
      // (each rank builds its own RAM cache, so that one stays outside the barrier).
      if (config.data.cache == core::CacheMode::kDisk) make_train_loader(ctx, config, options);
    } catch (...) {
      failure = std::current_exception();
    }
    if (ctx.group && first) ctx.group->barrier();
    if (failure) std::rethrow_exception(failure);
  }
  ctx.dataset = run_dataset_spec(config, yaml_spec);
  if (!ctx.train_loader) make_train_loader(ctx, config, options);

  const ModelSource source = resolve_model_source(config);
  if (!source.architecture.empty()) {
    spdlog::info("model: {} from {}", source.name.display(), source.architecture.string());
  }
  if (config.run.resume.empty() && !source.weights.empty()) {
    transfer_pretrained(ctx, source);  // builds the model (the source may set its class widths)
  } else {
    ctx.model = ctx.task->build_model(source.name, ctx.dataset);  // a resume loads its weights
  }
  if (config.run.resume.empty() && source.weights.empty() && config.model.pretrained == "true" &&
      !is_weights_file(config.model.model)) {
    spdlog::info(
        "pretrained: true, but {} has no weights file here (no downloads): training from "
        "scratch; give pretrained=PATH or model=PATH.pt to fine-tune",
        source.name.display());
  }
  ctx.model->to(ctx.device);
  apply_memory_format(*ctx.model, model_memory_format(config, ctx.device));
  ctx.model->train();
  if (ctx.group) {  // rank 0's initial weights everywhere (per-rank seeds would differ otherwise)
    std::vector<at::Tensor> state;
    for (const auto& [name, tensor] : named_state(*ctx.model)) state.push_back(tensor);
    ctx.group->broadcast(state, 0);
  }
  ctx.precision = choose_precision(config.run.precision, *ctx.model, ctx.device, config.data.imgsz,
                                   config.data.batch / world_size, ctx.group.get());
  spdlog::info("{}", ctx.precision.reason);
  if (config.run.sync_bn && ctx.group && world_size > 1) {
    std::shared_ptr<distributed::Group> group = ctx.group;
    const int64_t layers = model::set_batch_norm_override(
        *ctx.model, [group](torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x) {
          return distributed::sync_batch_norm(x, bn, *group);
        });
    spdlog::info("sync_bn: {} BatchNorm layers take their batch statistics over all {} ranks",
                 layers, world_size);
  }
  ctx.frozen_layers = frozen_layer_indices(config.model.freeze,
                                           static_cast<int64_t>(ctx.model->layer_modules().size()));
  ctx.frozen = freeze_layers(*ctx.model, ctx.frozen_layers);
  if (!ctx.frozen.empty()) {
    spdlog::info("freeze: layers [{}] ({} parameters, BatchNorm statistics kept): {}",
                 fmt::join(ctx.frozen_layers, ", "), ctx.frozen.size(),
                 fmt::join(ctx.frozen, ", "));
  }
  std::vector<std::string> trainable_names;
  for (const auto& p : ctx.model->named_parameters()) {
    if (!p.value().requires_grad()) continue;
    ctx.trainable.push_back(p.value());
    trainable_names.push_back(p.key());
  }
  if (ctx.group && world_size > 1) {
    ctx.reducer =
        std::make_unique<distributed::GradientReducer>(*ctx.group, ctx.trainable, trainable_names);
    spdlog::info("data-parallel: {} ranks ({}), batch {} per rank, {} gradient buckets", world_size,
                 distributed::backend_name(ctx.group->backend()), config.data.batch / world_size,
                 ctx.reducer->buckets());
  }

  ctx.criterion = ctx.task->build_loss(config.loss, *ctx.model, ctx.dataset);
  ctx.columns = ctx.task->columns(*ctx.model);

  ctx.optimizer_choice =
      choose_optimizer(config, static_cast<int64_t>(ctx.train_set->size()), ctx.dataset.nc());
  ctx.optimizer = build_optimizer(config, ctx.optimizer_choice, *ctx.model, ctx.frozen);
  const auto& c = ctx.optimizer_choice;
  spdlog::info("optimizer: {}{} lr={:g} momentum={:g} weight_decay={:g} ({} groups, {} impl)",
               optim::optimizer_kind_name(c.kind), c.auto_chosen ? " (auto)" : "", c.lr, c.momentum,
               c.weight_decay, ctx.optimizer->groups().size(),
               config.optim.impl == core::OptimizerImpl::kScalar    ? "scalar"
               : config.optim.impl == core::OptimizerImpl::kBatched ? "batched"
                                                                    : "padded");

  ctx.live_state = named_state(*ctx.model);
  ctx.ema = std::make_unique<optim::ModelEma>(ctx.live_state, config.ema.decay, config.ema.tau,
                                              config.ema.impl == core::EmaImpl::kScalar
                                                  ? optim::EmaSchedule::kScalar
                                                  : optim::EmaSchedule::kForeach);

  ctx.schedule.epochs = config.schedule.epochs;
  ctx.schedule.batches_per_epoch = ctx.train_loader->batches_per_epoch();
  ctx.schedule.warmup_epochs = config.schedule.warmup_epochs;
  ctx.schedule.warmup_momentum = config.schedule.warmup_momentum;
  ctx.schedule.warmup_bias_lr = c.warmup_bias_lr;
  ctx.schedule.momentum = config.optim.momentum;
  ctx.schedule.lrf = config.schedule.lrf;
  ctx.schedule.cos_lr = config.schedule.cos_lr;
  ctx.schedule.nbs = config.optim.nbs;
  ctx.schedule.batch = config.data.batch;
  return ctx;
}

}  // namespace trainer::engine
