// What a fit records about itself: the user's config with the run's decisions, the user's device
// list in the record and this rank's device in the rank's config; class widths written only where
// the model's differ from the user's cls_width.
#include <doctest/doctest.h>

#include "engine/run_decisions.h"

using namespace trainer;

namespace {

core::TrainConfig user_config() {
  core::TrainConfig c;
  c.run.device = "0,1";
  c.model.model = "runs/detect/train/weights/best.pt";
  c.model.cls_width = "[64, 64]";
  return c;
}

}  // namespace

TEST_CASE("run decisions: nothing decided records the user's config as given") {
  const core::TrainConfig user = user_config();
  const core::TrainConfig recorded = engine::recorded_config(user, {});
  CHECK(recorded.run.device == "0,1");
  CHECK(recorded.model.cls_width == "[64, 64]");
  CHECK(recorded.model.architecture.empty());
  CHECK(recorded.run.precision_used.empty());
  CHECK_FALSE(recorded.run.task.has_value());
}

TEST_CASE("run decisions: the record carries the task, architecture and precision decided") {
  engine::RunDecisions d;
  d.task = core::Task::kPose;
  d.architecture = "yolo26s-pose";
  d.precision_used = "bf16";
  const core::TrainConfig recorded = engine::recorded_config(user_config(), d);
  REQUIRE(recorded.run.task.has_value());
  CHECK(*recorded.run.task == core::Task::kPose);
  CHECK(recorded.model.architecture == "yolo26s-pose");
  CHECK(recorded.run.precision_used == "bf16");
  CHECK(recorded.run.device == "0,1");  // the record keeps the user's device list
}

TEST_CASE("run decisions: class widths are written only where the model's differ") {
  engine::RunDecisions d;
  d.class_widths = model::ClassWidths{64, 64};  // what "[64, 64]" gives: the user's spelling stays
  CHECK(engine::recorded_config(user_config(), d).model.cls_width == "[64, 64]");
  d.class_widths = model::ClassWidths{20, 20};  // a fine-tune rebuilt them at the source's
  CHECK(engine::recorded_config(user_config(), d).model.cls_width == "20");
  d.class_widths = model::ClassWidths{32, 48};
  CHECK(engine::recorded_config(user_config(), d).model.cls_width == "[32, 48]");
  core::TrainConfig defaults = user_config();
  defaults.model.cls_width.clear();
  d.class_widths = model::ClassWidths{};
  CHECK(engine::recorded_config(defaults, d).model.cls_width.empty());
}

TEST_CASE("run decisions: the rank's config is the record with this rank's device") {
  engine::RunDecisions d;
  d.task = core::Task::kObb;
  d.class_widths = model::ClassWidths{20, 20};
  const core::TrainConfig user = user_config();
  const core::TrainConfig rank = engine::rank_config(user, d, "cuda:1");
  CHECK(rank.run.device == "cuda:1");
  REQUIRE(rank.run.task.has_value());
  CHECK(*rank.run.task == core::Task::kObb);
  CHECK(rank.model.cls_width == "20");
  CHECK(user.run.device == "0,1");  // the user's config is a value: untouched
}
