// Every default against the reference trainer's default.yaml (reference-behaviour.md 1.5, 2, 3, 5,
// 6).
#include <doctest/doctest.h>

#include "core/config.h"
#include "core/config_schema.h"

#include <set>

using namespace trainer::core;

TEST_CASE("optimizer and schedule defaults equal the reference (section 1.5)") {
  const TrainConfig c;
  CHECK(c.optim.optimizer == "auto");
  CHECK(c.optim.lr0 == 0.01);
  CHECK(c.schedule.lrf == 0.01);
  CHECK(c.optim.momentum == 0.937);
  CHECK(c.optim.weight_decay == 0.0005);
  CHECK(c.schedule.warmup_epochs == 3.0);
  CHECK(c.schedule.warmup_momentum == 0.8);
  CHECK(c.schedule.warmup_bias_lr == 0.1);
  CHECK(c.optim.nbs == 64);
  CHECK(c.schedule.cos_lr == false);
}

TEST_CASE("MuSGD, Newton-Schulz, clipping and EMA constants equal the reference (sections 1-3)") {
  const TrainConfig c;
  CHECK(c.optim.muon_gain == 0.2);
  CHECK(c.optim.sgd_gain == 1.0);
  CHECK(c.optim.ns_steps == 5);
  CHECK(c.optim.ns_coefficients == std::vector<double>{3.4445, -4.7750, 2.0315});
  CHECK(c.optim.ns_dtype == NsDtype::kBF16);
  CHECK(c.optim.max_grad_norm == 10.0);
  CHECK(c.ema.decay == 0.9999);
  CHECK(c.ema.tau == 2000.0);
}

TEST_CASE("loss gains equal the reference (section 5.1)") {
  const TrainConfig c;
  CHECK(c.loss.box == 7.5);
  CHECK(c.loss.cls == 0.5);
  CHECK(c.loss.dfl == 1.5);
}

TEST_CASE("augmentation defaults equal the reference (section 6.3)") {
  const AugmentConfig a;
  CHECK(a.hsv_h == 0.015);
  CHECK(a.hsv_s == 0.7);
  CHECK(a.hsv_v == 0.4);
  CHECK(a.degrees == 0.0);
  CHECK(a.translate == 0.1);
  CHECK(a.scale == 0.5);
  CHECK(a.shear == 0.0);
  CHECK(a.perspective == 0.0);
  CHECK(a.flipud == 0.0);
  CHECK(a.fliplr == 0.5);
  CHECK(a.mosaic == 1.0);
  CHECK(a.mixup == 0.0);
}

TEST_CASE("run and data defaults equal the reference (sections 3.3, 3.4, 6)") {
  const TrainConfig c;
  CHECK(c.schedule.epochs == 100);
  CHECK(c.data.batch == 16);
  CHECK(c.data.imgsz == 640);
  CHECK(c.data.workers == 8);
  CHECK(c.data.cache == CacheMode::kNone);
  CHECK(c.schedule.close_mosaic == 10);
  CHECK(c.schedule.patience == 100);
  CHECK(c.run.seed == 0);
  CHECK(c.run.deterministic == true);
  CHECK(c.run.save_period == -1);
  CHECK(c.run.exist_ok == false);
  CHECK(c.run.name == "train");
  CHECK(c.run.project.empty());
  CHECK(c.run.val == true);
  CHECK(c.run.plots == true);
  CHECK(c.run.tensorboard == true);
  CHECK_FALSE(c.run.task.has_value());  // from the model name (core/task.h)
}

TEST_CASE("our own defaults: fast schedules on, automatic precision") {
  const TrainConfig c;
  CHECK(c.optim.impl == OptimizerImpl::kPadded);
  CHECK(c.ema.impl == EmaImpl::kForeach);
  CHECK(c.run.precision == Precision::kAuto);
  CHECK(c.model.model == "yolo26n");
}

TEST_CASE("decode_budget_gb: 1 GiB of decoded pixels by default, any positive amount") {
  const TrainConfig c;
  CHECK(c.data.decode_budget_gb == 1.0);
  const FieldSpec* f = find_field("decode_budget_gb");
  REQUIRE(f != nullptr);
  CHECK(f->section == "data");
  REQUIRE(f->range.has_value());
  CHECK_FALSE(f->range->contains(0.0));
  CHECK(f->range->contains(0.25));
  CHECK(f->range->contains(64.0));
}

TEST_CASE("every registry key is unique and every default lies in its own range") {
  const TrainConfig c;
  std::set<std::string> keys;
  for (const auto& f : config_fields()) {
    INFO(f.key);
    CHECK(keys.insert(f.key).second);
    CHECK_FALSE(is_reference_only_key(f.key));
    const FieldValue v = f.get(c);
    if (f.range && std::holds_alternative<double>(v)) CHECK(f.range->contains(std::get<double>(v)));
    if (f.range && std::holds_alternative<int64_t>(v)) {
      CHECK(f.range->contains(static_cast<double>(std::get<int64_t>(v))));
    }
  }
}
