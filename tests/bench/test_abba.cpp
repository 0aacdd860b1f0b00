// The ABBA driver: arm order, discarded warm-up arms, reduction to a claim, JSON and table.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "bench/abba.h"

using namespace trainer::bench;

TEST_CASE("ABBA runs warm-up arms A B then alternates A B and reduces the pairs") {
  std::vector<std::string> order;
  // Baseline arms 100, 110, 90; candidate arms 80, 99, 90; warm-up arms 1000 (discarded).
  const std::vector<double> a{100, 110, 90}, b{80, 99, 90};
  ArmRunner runner = [&](Arm arm, int index, bool warmup) {
    order.push_back(std::string(warmup ? "w" : "") + (arm == Arm::kBaseline ? "A" : "B") +
                    std::to_string(index));
    ArmMeasurement m;
    m.value = warmup ? 1000.0 : (arm == Arm::kBaseline ? a : b)[static_cast<size_t>(index)];
    m.peak_bytes = arm == Arm::kBaseline ? 100 : 200;
    m.peak_kind = "cpu_peak_rss";
    return m;
  };
  AbbaOptions options;
  options.pairs = 3;
  options.warmup_arms = 2;
  const AbbaResult r = run_abba(runner, options);
  CHECK(order == std::vector<std::string>{"wA0", "wB0", "A0", "B0", "A1", "B1", "A2", "B2"});
  // 1 - 80/100 = 0.2, 1 - 99/110 = 0.1, 1 - 90/90 = 0 -> median 0.1, range 0..0.2.
  REQUIRE(r.reductions.size() == 3);
  CHECK(r.reductions[0] == doctest::Approx(0.2));
  CHECK(r.reductions[1] == doctest::Approx(0.1));
  CHECK(r.reductions[2] == doctest::Approx(0.0));
  CHECK(r.reduction_summary.median == doctest::Approx(0.1));
  CHECK(r.baseline_summary.median == 100.0);
  CHECK(r.candidate_summary.median == 90.0);
  CHECK((r.verdict == Verdict::kCrossesZero));
  CHECK(r.warmup.size() == 2);

  const Json j = abba_json(r, options, "ms");
  CHECK(missing_fields(j, abba_json_keys()).empty());
  CHECK(j["verdict"] == "crosses_zero");
  CHECK(j["baseline"]["values"] == Json::array({100.0, 110.0, 90.0}));
  CHECK(j["candidate"]["peak_bytes"] == Json::array({200, 200, 200}));
  CHECK(j["warmup_values"] == Json::array({1000.0, 1000.0}));
  CHECK(j["reduction"]["max"].get<double>() == doctest::Approx(0.2));

  const std::string table = abba_table(r, options, "ms", "impl=scalar", "impl=padded");
  CHECK(table.find("A = impl=scalar") != std::string::npos);
  CHECK(table.find("20.00%") != std::string::npos);
  CHECK(table.find("paired reduction median 10.00% (range 0.00% .. 20.00%)") != std::string::npos);
  CHECK(table.find("verdict: crosses_zero (threshold 8.0%") != std::string::npos);
}

TEST_CASE("ABBA with one pair and no warm-up, and bad options") {
  int calls = 0;
  ArmRunner runner = [&](Arm arm, int, bool) {
    ++calls;
    ArmMeasurement m;
    m.value = arm == Arm::kBaseline ? 50.0 : 40.0;  // 1 - 40/50 = 0.2
    return m;
  };
  AbbaOptions options;
  options.pairs = 1;
  options.warmup_arms = 0;
  const AbbaResult r = run_abba(runner, options);
  CHECK(calls == 2);
  CHECK(r.reduction_summary.median == doctest::Approx(0.2));
  CHECK((r.verdict == Verdict::kAdopt));
  options.pairs = 0;
  CHECK_THROWS_AS(run_abba(runner, options), std::invalid_argument);
  CHECK_THROWS_AS(reduce_pairs({}, {}), std::invalid_argument);
}
