// `trainer bench precision CONFIG [key=value ...]`: BF16 autocast against fp32 on the config's
// first training batch with identical weights (engine/precision/precision_compare.h): per-layer
// activation and gradient errors, head outputs, loss terms, the ops that ran in BF16, and whether
// the loss, gradients and BN statistics stayed fp32. JSON on stdout, a summary on stderr.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "app/bench_command.h"
#include "app/config_args.h"
#include "bench/run_record.h"
#include "core/atomic_file.h"
#include "core/config_loader.h"
#include "core/config_writer.h"
#include "data/loader.h"
#include "engine/batch_targets.h"
#include "engine/device/memory_format.h"
#include "engine/precision/precision_choice.h"
#include "engine/precision/precision_compare.h"
#include "engine/training_context.h"

namespace trainer::app {
namespace {

struct PrecisionCli {
  std::vector<std::string> args;  // CONFIG then key=value overrides
  bool mosaic = true;
  std::string json;
};

int run_bench_precision(const PrecisionCli& opts) {
  const auto [file, overrides] = split_config_args(opts.args);
  const core::TrainConfig config = core::load_config(file, overrides).config;
  engine::ContextOptions context_options;
  context_options.need_val = false;
  context_options.show_progress = false;
  engine::TrainingContext ctx = engine::build_training_context(config, context_options);
  ctx.inputs.train_loader->start_epoch(0, opts.mosaic);
  const auto batch = ctx.inputs.train_loader->next();
  if (!batch) throw core::InputError("bench precision: the training split gave no batch");
  const auto images = data::images_to_device(batch->images, ctx.device, torch::kFloat,
                                             engine::model_memory_format(config, ctx.device));
  const engine::PrecisionComparison c = engine::compare_precisions(
      *ctx.net.model, *ctx.net.criterion, images, engine::loss_targets_of(*batch), ctx.device);

  bench::Json j;
  j["benchmark"] = "precision";
  j["device"] = ctx.device.str();
  j["model"] = ctx.net.model->name().display();
  j["imgsz"] = config.data.imgsz;
  j["batch"] = images.size(0);
  j["auto_decision"] = ctx.precision.reason;
  // The timing `auto` never does: one training step in each precision at the run's batch.
  const engine::StepTimes times =
      engine::time_training_steps(*ctx.net.model, ctx.device, config.data.imgsz, images.size(0));
  j["step_ms"] = {{"fp32", times.fp32_ms}, {"bf16", times.bf16_ms}, {"speedup", times.speedup()}};
  j["head_box_error"] = c.head_box_error;
  j["head_class_error"] = c.head_class_error;
  bench::Json loss = bench::Json::object();
  for (size_t k = 0; k < c.loss_fp32.size(); ++k) {
    const std::string name = k < ctx.net.columns.loss_names.size() ? ctx.net.columns.loss_names[k]
                                                                   : fmt::format("item{}", k);
    const double a = c.loss_fp32[k], b = c.loss_bf16[k], f = c.loss_floor[k];
    const auto rel = [a](double x) {
      return a != 0.0 ? std::abs(x - a) / std::abs(a) : std::abs(x);
    };
    loss[name] = {{"fp32", a},
                  {"bf16", b},
                  {"relative_error", rel(b)},
                  {"fp32_rounded_input", f},
                  {"floor_relative_error", rel(f)}};
  }
  j["loss"] = loss;
  j["gradient_error"] = c.gradient_error;
  j["gradient_cosine"] = c.gradient_cosine;
  j["floor_gradient_error"] = c.floor_gradient_error;
  j["floor_gradient_cosine"] = c.floor_gradient_cosine;
  j["gradients_fp32"] = c.gradients_fp32;
  j["running_stats_fp32"] = c.running_stats_fp32;
  j["loss_low_precision_ops"] = c.loss_low_precision_ops;
  bench::Json layers = bench::Json::array();
  for (const auto& l : c.layers) {
    layers.push_back({{"index", l.index},
                      {"type", l.type},
                      {"bf16_dtype", l.bf16_dtype},
                      {"activation_error", l.activation_error},
                      {"gradient_error", l.gradient_error},
                      {"gradient_cosine", l.gradient_cosine},
                      {"floor_activation_error", l.floor_activation_error},
                      {"floor_gradient_error", l.floor_gradient_error}});
  }
  j["layers"] = layers;
  bench::Json ops = bench::Json::object();
  for (const auto& [name, n] : c.forward_ops) {
    ops[name] = {
        {"bf16_calls", n.bf16_calls}, {"fp32_calls", n.fp32_calls}, {"other_calls", n.other_calls}};
  }
  j["forward_ops"] = ops;
  bench::RunRecord record = bench::collect_run_record(ctx.device.str());
  record.config_yaml = core::config_to_yaml(config);
  j["record"] = bench::record_to_json(record);

  spdlog::info(
      "bf16 vs fp32 on {} x {}px ({}): head box {:.2e}, class {:.2e}; gradients {:.2e} "
      "(cosine {:.4f}); noise floor (fp32 on bf16-rounded images): gradients {:.2e} "
      "(cosine {:.4f})",
      images.size(0), config.data.imgsz, ctx.net.model->name().display(), c.head_box_error,
      c.head_class_error, c.gradient_error, c.gradient_cosine, c.floor_gradient_error,
      c.floor_gradient_cosine);
  for (const auto& [name, v] : loss.items()) {
    spdlog::info("  {}: fp32 {:.6g} bf16 {:.6g} ({:.2e}; floor {:.2e})", name,
                 v["fp32"].get<double>(), v["bf16"].get<double>(),
                 v["relative_error"].get<double>(), v["floor_relative_error"].get<double>());
  }
  spdlog::info("  loss ops on bf16 values: {}; gradients fp32: {}; BN running stats fp32: {}",
               c.loss_low_precision_ops.empty()
                   ? "none"
                   : fmt::format("{}", fmt::join(c.loss_low_precision_ops, ", ")),
               c.gradients_fp32, c.running_stats_fp32);
  spdlog::info("  a training step: fp32 {:.0f} ms, bf16 {:.0f} ms ({:.2f}x)", times.fp32_ms,
               times.bf16_ms, times.speedup());
  const std::string text = j.dump(2) + "\n";
  std::cout << text;
  if (!opts.json.empty()) core::write_file_atomically(opts.json, text);
  return 0;
}

}  // namespace

Command register_bench_precision_command(CLI::App& bench, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<PrecisionCli>();
  CLI::App* cmd = bench.add_subcommand(
      "precision",
      "bf16 autocast vs fp32 on one batch: per-layer, head, loss and gradient errors (JSON)");
  cmd->add_option("args", opts->args, "CONFIG file, then key=value overrides");
  cmd->add_flag("!--no-mosaic", opts->mosaic, "take the batch without mosaic");
  cmd->add_option("--json", opts->json, "also write the JSON to this file");
  return {cmd, [opts] { return run_bench_precision(*opts); }};
}

}  // namespace trainer::app
