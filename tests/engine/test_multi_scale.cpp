// multi_scale and time: the reference's formulas on hand-computed values.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <map>

#include "engine/multi_scale.h"
#include "engine/time_budget.h"

using namespace trainer::engine;

TEST_CASE("multi_scale: randrange bounds as the reference computes them") {
  // imgsz 640, f 0.5: lo = max(32, int(320)) = 320, hi = int(960 + 32) = 992 (exclusive).
  const auto r = multi_scale_range(640, 0.5, 32);
  CHECK(r.lo == 320);
  CHECK(r.hi == 992);
  CHECK(r.smallest() == 320);
  CHECK(r.largest() == 960);  // 991 // 32 * 32
  // A small image: lo never falls below the stride.
  const auto small = multi_scale_range(64, 0.9, 32);
  CHECK(small.lo == 32);
  CHECK(small.hi == 153);  // int(64 * 1.9 + 32) = int(153.6)
  CHECK(small.largest() == 128);
}

TEST_CASE(
    "multi_scale: draws are stride multiples in range, deterministic, spread like randrange") {
  // imgsz 128, f 0.25: randrange(96, 192) // 32 * 32 gives 96, 128, 160, each from 32 integers.
  const auto r = multi_scale_range(128, 0.25, 32);
  std::map<int64_t, int> counts;
  for (int64_t ni = 0; ni < 3000; ++ni) {
    const int64_t size = draw_multi_scale_size(r, 7, ni);
    CHECK(size % 32 == 0);
    ++counts[size];
    CHECK(draw_multi_scale_size(r, 7, ni) == size);  // the same (seed, ni), the same size
  }
  REQUIRE(counts.size() == 3);
  for (const auto& [size, n] : counts) {
    CHECK((size == 96 || size == 128 || size == 160));
    CHECK(n == doctest::Approx(1000).epsilon(0.1));
  }
  int differ = 0;
  for (int64_t ni = 0; ni < 50; ++ni) {
    differ += draw_multi_scale_size(r, 7, ni) != draw_multi_scale_size(r, 8, ni);
  }
  CHECK(differ > 10);  // another seed, other sizes
}

TEST_CASE("multi_scale: the batch shape keeps the aspect and rounds each side up to the stride") {
  CHECK(multi_scale_shape(128, 128, 96, 32) == std::array<int64_t, 2>{96, 96});
  // (96, 128) to 160: scale 1.25, h 120 -> 128, w 160.
  CHECK(multi_scale_shape(96, 128, 160, 32) == std::array<int64_t, 2>{128, 160});
  CHECK(multi_scale_shape(96, 128, 128, 32) == std::array<int64_t, 2>{96, 128});  // unchanged
  const auto images = torch::full({2, 3, 96, 128}, 0.25f);
  const auto resized = apply_multi_scale(images, 160, 32);
  CHECK(resized.sizes() == torch::IntArrayRef({2, 3, 128, 160}));
  CHECK(resized.sub(0.25f).abs().max().item<float>() < 1e-6f);  // a flat image stays flat
  CHECK(apply_multi_scale(images, 128, 32).is_same(images));
}

TEST_CASE("time: epochs re-estimated from the mean epoch time, budget checked against elapsed") {
  const TimeBudget budget(0.5);  // 1800 s
  CHECK(budget.active());
  CHECK_FALSE(TimeBudget(0.0).active());
  CHECK(budget.epochs_for(60.0, 1) == 30);   // 1800 / 60
  CHECK(budget.epochs_for(130.0, 2) == 28);  // ceil(1800 / 65) = ceil(27.7)
  CHECK(budget.epochs_for(5000.0, 1) == 1);  // never below one
  CHECK_FALSE(budget.exhausted(1800.0));
  CHECK(budget.exhausted(1800.5));
  CHECK_FALSE(TimeBudget(0.0).exhausted(1e9));
}
