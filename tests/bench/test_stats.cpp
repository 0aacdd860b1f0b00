// The benchmark statistics on hand-made inputs: medians, paired reductions, ranges, verdicts.
#include <doctest/doctest.h>

#include <stdexcept>

#include "bench/stats.h"

using namespace trainer::bench;

TEST_CASE("median of odd and even counts") {
  CHECK(median({3.0, 1.0, 2.0}) == 2.0);       // sorted 1 2 3 -> 2
  CHECK(median({4.0, 1.0, 3.0, 2.0}) == 2.5);  // sorted 1 2 3 4 -> (2 + 3) / 2
  CHECK(median({7.0}) == 7.0);
  CHECK(median({5.0, 5.0, 1.0, 9.0}) == 5.0);              // sorted 1 5 5 9 -> (5 + 5) / 2
  CHECK(median({10.0, -2.0, 4.0, 8.0, 6.0, 0.0}) == 5.0);  // -2 0 4 6 8 10 -> (4 + 6) / 2
  CHECK_THROWS_AS(median({}), std::invalid_argument);
}

TEST_CASE("summary gives median, min, max and count") {
  const Summary s = summarize({256.8, 254.9, 260.1, 255.0});
  CHECK(s.median == doctest::Approx((255.0 + 256.8) / 2));  // 254.9 255.0 256.8 260.1
  CHECK(s.min == 254.9);
  CHECK(s.max == 260.1);
  CHECK(s.count == 4);
  CHECK_THROWS_AS(summarize({}), std::invalid_argument);
}

TEST_CASE("paired reductions are 1 - B/A per pair") {
  // 1 - 150/200 = 0.25; 1 - 250/250 = 0; 1 - 110/100 = -0.1
  const auto r = paired_reductions({200.0, 250.0, 100.0}, {150.0, 250.0, 110.0});
  REQUIRE(r.size() == 3);
  CHECK(r[0] == doctest::Approx(0.25));
  CHECK(r[1] == doctest::Approx(0.0));
  CHECK(r[2] == doctest::Approx(-0.1));
  // The seeds' short fit: 1 - 79.183/89.448 = 0.114760... (a ratio of medians, for scale).
  CHECK(paired_reductions({89.448}, {79.183})[0] == doctest::Approx(0.1147594).epsilon(1e-6));
  CHECK_THROWS_AS(paired_reductions({1.0, 2.0}, {1.0}), std::invalid_argument);
  CHECK_THROWS_AS(paired_reductions({0.0}, {1.0}), std::invalid_argument);
}

TEST_CASE("verdicts: adopt, below the bar, range crossing zero, slower") {
  // WP-193's five pairs: 13.28 13.13 14.90 12.94 6.38 % -> median 13.13, range 6.38..14.90: adopt.
  const Summary seed = summarize({0.1328, 0.1313, 0.1490, 0.1294, 0.0638});
  CHECK(seed.median == doctest::Approx(0.1313));
  CHECK(seed.min == doctest::Approx(0.0638));
  CHECK(seed.max == doctest::Approx(0.1490));
  CHECK((judge(seed) == Verdict::kAdopt));
  // Shaped like WP-193b's rejected MuSGD-only rerun: median 7.48% < 8%, all pairs > 0: below.
  CHECK((judge(summarize({0.0748, 0.0701, 0.0812, 0.0750, 0.0690})) == Verdict::kBelowBar));
  // Shaped like the seeds' mask-loss repeats: median 4.44%, range -10.88%..6.05%: crosses zero.
  CHECK((judge(summarize({0.0444, -0.1088, 0.0605, 0.0300, 0.0500})) == Verdict::kCrossesZero));
  // A large median does not rescue a range that crosses zero.
  CHECK((judge(summarize({0.20, 0.30, -0.01})) == Verdict::kCrossesZero));
  // A pair at exactly zero is no improvement: the range touches zero.
  CHECK((judge(summarize({0.0, 0.12, 0.15})) == Verdict::kCrossesZero));
  CHECK((judge(summarize({-0.05, -0.02, -0.10})) == Verdict::kSlower));
  // The threshold is inclusive and configurable.
  CHECK((judge(summarize({0.08, 0.09, 0.07})) == Verdict::kAdopt));
  VerdictRule strict;
  strict.threshold = 0.10;
  CHECK((judge(summarize({0.08, 0.09, 0.07}), strict) == Verdict::kBelowBar));
  CHECK(std::string(verdict_name(Verdict::kCrossesZero)) == "crosses_zero");
  CHECK(std::string(verdict_name(Verdict::kAdopt)) == "adopt");
}
