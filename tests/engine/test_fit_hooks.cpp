// The fit's test hooks: the fault scripts' environment spellings parsed, a bad one named, and no
// hook without the test switch.
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/error.h"
#include "engine/fit_hooks.h"

using namespace trainer;

TEST_CASE("fit hooks: TRAINER_FAULT_NON_FINITE is RANK:EPOCH:BATCH, anything else is named") {
  const engine::NonFiniteFault f = engine::parse_non_finite_fault("1:2:30");
  CHECK(f.rank == 1);
  CHECK(f.epoch == 2);
  CHECK(f.batch == 30);
  for (const char* bad : {"1:2", "a:b:c", "1:2:3x", ""}) {
    CHECK_THROWS_WITH_AS(engine::parse_non_finite_fault(bad),
                         doctest::Contains("is not RANK:EPOCH:BATCH"), core::ConfigError);
  }
}

TEST_CASE("fit hooks: TRAINER_FAULT_KILL lists training and validation kill points") {
  const auto points = engine::parse_kill_points("0:1:2:3,1:0:4:v5");
  REQUIRE(points.size() == 2);
  CHECK(points[0].attempt == 0);
  CHECK(points[0].rank == 1);
  CHECK(points[0].epoch == 2);
  CHECK(points[0].batch == 3);
  CHECK_FALSE(points[0].validation);
  CHECK(points[1].attempt == 1);
  CHECK(points[1].rank == 0);
  CHECK(points[1].epoch == 4);
  CHECK(points[1].batch == 5);
  CHECK(points[1].validation);
  CHECK_THROWS_WITH_AS(engine::parse_kill_points("0:1:2:3,0:1:x"), doctest::Contains("'0:1:x'"),
                       core::ConfigError);
  CHECK_THROWS_AS(engine::parse_kill_points("0:1:2:v3x"), core::ConfigError);
}

TEST_CASE("fit hooks: the environment's hooks fire once for their rank, none without the switch") {
  ::setenv("TRAINER_FAULT_NON_FINITE", "1:0:2", 1);
  ::unsetenv("TRAINER_FAULT_KILL");
  ::unsetenv("TRAINER_TEST_HOOKS");
  CHECK_FALSE(engine::fault_hooks_from_environment(1).inject_non_finite);  // switch off: ignored

  ::setenv("TRAINER_TEST_HOOKS", "1", 1);
  CHECK_FALSE(engine::fault_hooks_from_environment(0).inject_non_finite);  // another rank's
  const engine::FitHooks hooks = engine::fault_hooks_from_environment(1);
  REQUIRE(hooks.inject_non_finite);
  CHECK_FALSE(hooks.inject_non_finite(0, 1));
  CHECK(hooks.inject_non_finite(0, 2));
  CHECK_FALSE(hooks.inject_non_finite(0, 2));  // once: the redone epoch runs clean
  CHECK_FALSE(hooks.before_batch);             // no kill points asked for

  ::setenv("TRAINER_FAULT_KILL", "0:1:3:v4", 1);  // attempt 0 (no torchrun): validation only
  ::unsetenv("TORCHELASTIC_RESTART_COUNT");
  const engine::FitHooks kills = engine::fault_hooks_from_environment(1);
  CHECK_FALSE(kills.before_batch);
  CHECK(kills.after_validation_batch);
  CHECK_FALSE(engine::fault_hooks_from_environment(0).after_validation_batch);
  ::setenv("TORCHELASTIC_RESTART_COUNT", "1", 1);  // another attempt: not this one's
  CHECK_FALSE(engine::fault_hooks_from_environment(1).after_validation_batch);

  ::unsetenv("TORCHELASTIC_RESTART_COUNT");
  ::unsetenv("TRAINER_FAULT_KILL");
  ::unsetenv("TRAINER_FAULT_NON_FINITE");
  ::unsetenv("TRAINER_TEST_HOOKS");
}
