// The training run's TensorBoard scalars: the epoch record's columns by name, NaN left out, the
// epoch as the step (not a scalar), plus the epoch's own time.
#include <doctest/doctest.h>

#include <limits>

#include "engine/log/tensorboard_log.h"
#include "engine/task/detect_task.h"

using namespace trainer::engine;

TEST_CASE("tensorboard scalars: every column but epoch, NaN skipped, then time/epoch") {
  EpochRecord r;
  r.columns = detection_columns(1);
  r.epoch = 2;
  r.seconds = 30;
  r.train_loss = {1.5, 2.5, 0.75};
  r.learning_rates = {0.1, 0.2, 0.3};
  EpochValidation v;
  v.metrics = {0.5, 0.25, 0.125, 0.0625};
  v.extras = {std::numeric_limits<double>::quiet_NaN(), 0.12};
  v.loss_items = {3.0, 4.0, 5.0};
  r.validation = v;
  const auto scalars = epoch_scalars(r, 7.5);
  const auto cells = r.cells();
  REQUIRE(scalars.size() == cells.size() - 2 + 1);  // no epoch, no NaN, plus time/epoch
  size_t s = 0;
  for (const auto& [column, value] : cells) {
    if (column == "epoch" || column == "metrics/coco/AP") continue;
    CAPTURE(column);
    CHECK(scalars[s].tag == column);
    CHECK(scalars[s].value == static_cast<float>(value));
    ++s;
  }
  CHECK(scalars[0].tag == "time");
  CHECK(scalars[1].tag == "train/box_loss");
  CHECK(scalars.back().tag == "time/epoch");
  CHECK(scalars.back().value == 7.5f);

  r.validation.reset();  // no validation: metrics, val losses and extras are NaN, so absent
  for (const auto& scalar : epoch_scalars(r, 1)) {
    CHECK(scalar.tag.rfind("metrics/", 0) != 0);
    CHECK(scalar.tag.rfind("val/", 0) != 0);
  }
}
