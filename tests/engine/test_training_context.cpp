// build_training_context: what each part of the context holds once built (inputs, network,
// optimization), and the optimizer names the config accepts being the kinds lib/optim owns.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <set>
#include <string>

#include "core/config_loader.h"
#include "core/config_schema.h"
#include "core/error.h"
#include "engine/training_context.h"
#include "integration/fit_fixture.h"
#include "model/yolo_model.h"
#include "optim/musgd.h"
#include "optim/optimizer_kind.h"
#include "test_support.h"

using namespace trainer;
using namespace trainer::test;

TEST_CASE("training context: inputs, network and optimization as the config sets them") {
  TempDir dir;
  core::TrainConfig config = test::tiny_fit_config(dir.path(), "ctx", 3);
  config.model.freeze = "1";  // model.0
  const engine::TrainingContext ctx = engine::build_training_context(config);

  // Inputs: 16 training and 8 validation images of the fixture, batch 4 -> 4 batches.
  CHECK(ctx.inputs.train_set->size() == 16);
  REQUIRE(ctx.inputs.val_set);
  CHECK(ctx.inputs.val_set->size() == 8);
  CHECK(ctx.inputs.train_loader->batches_per_epoch() == 4);
  CHECK(ctx.batches_per_epoch() == 4);
  CHECK(ctx.architecture.display() == ctx.net.model->name().display());

  // Network: live_state is every parameter then every buffer, by the reference's keys; the
  // trainable list is the parameters that keep requires_grad (all but the frozen model.0.*).
  const auto& net = ctx.net;
  const size_t parameters = net.model->named_parameters().size();
  const size_t buffers = net.model->named_buffers().size();
  REQUIRE(net.live_state.size() == parameters + buffers);
  CHECK(net.live_state.front().first == net.model->named_parameters().begin()->key());
  CHECK(net.frozen_layers == std::vector<int64_t>{0});
  REQUIRE_FALSE(net.frozen.empty());
  for (const auto& name : net.frozen) CHECK(name.rfind("model.0.", 0) == 0);
  CHECK(net.trainable.size() == parameters - net.frozen.size());
  CHECK_FALSE(net.reducer);                   // one process
  CHECK(net.columns.loss_names.size() == 3);  // box, cls, and dfl or l1

  // Optimization: the groups hold exactly the trainable parameters; the schedule is the config's.
  size_t grouped = 0;
  for (const auto& group : ctx.optimization.optimizer->groups()) grouped += group.params.size();
  CHECK(grouped == net.trainable.size());
  CHECK(ctx.optimization.choice.kind == optim::OptimizerKind::kMuSGD);
  const auto& s = ctx.optimization.schedule;
  CHECK(s.epochs == 3);
  CHECK(s.batches_per_epoch == 4);
  CHECK(s.momentum == config.optim.momentum);  // the warmup's target
  CHECK(s.batch == 4);
  CHECK(ctx.optimization.ema->updates() == 0);
  CHECK_FALSE(ctx.bf16());  // precision: fp32 asked
}

TEST_CASE("training context: need_val false loads no validation split") {
  TempDir dir;
  engine::ContextOptions options;
  options.need_val = false;
  const auto ctx =
      engine::build_training_context(test::tiny_fit_config(dir.path(), "noval", 1), options);
  CHECK_FALSE(ctx.inputs.val_set);
  CHECK(ctx.inputs.train_set->size() == 16);
}

TEST_CASE("training context: every optimizer the config accepts is a kind lib/optim parses") {
  const core::FieldSpec* field = core::find_field("optimizer");
  REQUIRE(field != nullptr);
  std::set<optim::OptimizerKind> kinds;
  for (const auto& name : field->choices) {
    const auto kind = optim::optimizer_kind_from_name(name);
    REQUIRE_MESSAGE(kind.has_value(), name);
    CHECK(optim::optimizer_kind_name(*kind) == name);  // the same spelling both ways
    kinds.insert(*kind);
  }
  CHECK(kinds.size() == 4);  // auto, MuSGD, SGD, AdamW
  core::TrainConfig config;
  config.optim.optimizer = "Adam";  // not a kind: set in code, past the loader's check
  CHECK_THROWS_AS(engine::choose_optimizer(config, 100, 3), core::ConfigError);
}

TEST_CASE(
    "training context: each optimizer_impl the config accepts is MuSGD's schedule of that name") {
  const core::FieldSpec* field = core::find_field("optimizer_impl");
  REQUIRE(field != nullptr);
  REQUIRE(field->choices.size() == 3);
  auto net = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 80);
  for (const auto& name : field->choices) {
    const auto config =
        core::load_config_text("optimizer: MuSGD\noptimizer_impl: " + name + "\n", "t.yaml", "/tmp")
            .config;
    const auto choice = engine::choose_optimizer(config, 100, 80);
    const auto optimizer = engine::build_optimizer(config, choice, *net);
    const auto* musgd = dynamic_cast<const optim::MuSGD*>(optimizer.get());
    REQUIRE(musgd != nullptr);
    CHECK(std::string(optim::muon_schedule_name(musgd->options().schedule)) == name);
  }
}
