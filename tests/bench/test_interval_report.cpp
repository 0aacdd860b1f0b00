// The interval JSON schema: summaries of hand-made intervals, the breakdown, peak memory, record.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "bench/interval_report.h"

using namespace trainer;
using namespace trainer::bench;

namespace {

engine::IntervalResult hand_made(bool with_stages) {
  engine::IntervalResult r;
  r.intervals_ms = {10.0, 30.0, 20.0, 40.0};  // median (20 + 30) / 2 = 25, min 10, max 40
  r.device = "cpu";
  r.precision = "bf16";
  r.precision_reason = "precision: auto -> bf16: CPU has AVX512-BF16";
  r.batches_per_epoch = 32;
  if (with_stages) {
    auto& s = r.stages;
    s.loader_wait = {1, 3, 2, 4};       // median 2.5
    s.h2d = {0.5, 0.5, 0.5, 0.5};       // 0.5
    s.forward_loss = {10, 12, 11, 13};  // 11.5
    s.backward = {20, 22, 21, 23};      // 21.5
    s.clip = {1, 1, 1, 1};              // 1
    s.optimizer = {5, 7, 6, 8};         // 6.5
    s.ema = {2, 2, 2, 2};               // 2
  }
  return r;
}

RunRecord record() {
  RunRecord r = collect_run_record("cpu");
  r.config_yaml = "imgsz: 320\n";
  r.counts = {{"warmup", 2}, {"measure", 4}};
  return r;
}

}  // namespace

TEST_CASE("interval JSON: summary, raw intervals, breakdown medians, peak memory and record") {
  const auto timed = hand_made(false);
  const auto breakdown = hand_made(true);
  engine::IntervalOptions options;
  options.warmup = 2;
  options.measure = 4;
  PeakMemory peak{"cpu_peak_rss", "cpu", 3 * 1024 * 1024, true};
  const Json j = interval_json(timed, &breakdown, options, peak, record());

  CHECK(missing_fields(j, interval_json_keys()).empty());
  CHECK_NOTHROW(check_interval_json(j));
  CHECK(j["benchmark"] == "interval");
  CHECK(j["precision"] == "bf16");
  CHECK(j["precision_reason"] == "precision: auto -> bf16: CPU has AVX512-BF16");
  CHECK(j["interval_ms"]["median"].get<double>() == 25.0);
  CHECK(j["interval_ms"]["min"].get<double>() == 10.0);
  CHECK(j["interval_ms"]["max"].get<double>() == 40.0);
  CHECK(j["intervals_ms"] == Json::array({10.0, 30.0, 20.0, 40.0}));
  CHECK(j["warmup"] == 2);
  CHECK(j["measure"] == 4);
  CHECK(j["batches_per_epoch"] == 32);
  const Json& stages = j["breakdown"]["stages_ms"];
  CHECK(stages["loader_wait"]["median"].get<double>() == 2.5);
  CHECK(stages["optimizer"]["median"].get<double>() == 6.5);
  CHECK(stages["backward"]["max"].get<double>() == 23.0);
  // 2.5 + 0.5 + 11.5 + 21.5 + 1 + 6.5 + 2 = 45.5
  CHECK(j["breakdown"]["sum_of_stage_medians_ms"].get<double>() == doctest::Approx(45.5));
  CHECK(j["breakdown"]["raw_ms"]["ema"].size() == 4);
  CHECK(j["peak_memory"]["mib"].get<double>() == doctest::Approx(3.0));
  CHECK(j["peak_memory"]["kind"] == "cpu_peak_rss");
  CHECK(j["record"]["config_yaml"] == "imgsz: 320\n");
  CHECK(j["record"]["counts"]["measure"] == 4);

  const std::string table = interval_table(j);
  CHECK(table.find("median 25.00 ms (min 10.00, max 40.00)") != std::string::npos);
  CHECK(table.find("optimizer") != std::string::npos);
  CHECK(j["breakdown"]["cuda_graph"] == false);
  CHECK_FALSE(j["breakdown"].contains("stage_note"));

  // A replayed step: the same stages, with a note saying which replay each holds.
  auto graphed = hand_made(true);
  graphed.cuda_graph = true;
  const Json g = interval_json(timed, &graphed, options, peak, record());
  CHECK(g["breakdown"]["cuda_graph"] == true);
  CHECK(g["breakdown"]["stage_note"] == graph_stage_note());
  CHECK(interval_table(g).find(graph_stage_note()) != std::string::npos);
}

TEST_CASE("interval JSON without breakdown, and the schema check names what is missing") {
  engine::IntervalOptions options;
  PeakMemory peak{"cpu_peak_rss", "cpu", 1, false};
  Json j = interval_json(hand_made(false), nullptr, options, peak, record());
  CHECK(j["breakdown"].is_null());
  CHECK_NOTHROW(check_interval_json(j));
  CHECK(interval_table(j).find("breakdown") == std::string::npos);

  Json no_record = j;
  no_record["record"].erase("git_revision");
  CHECK_THROWS_WITH_AS(check_interval_json(no_record),
                       "not an interval result: missing record.git_revision", std::runtime_error);
  Json no_median = j;
  no_median["interval_ms"].erase("median");
  CHECK_THROWS_WITH_AS(check_interval_json(no_median),
                       "not an interval result: missing interval_ms.median", std::runtime_error);
  CHECK_THROWS_AS(check_interval_json(Json::object()), std::runtime_error);

  engine::IntervalResult empty;
  CHECK_THROWS_AS(interval_json(empty, nullptr, options, peak, record()), std::invalid_argument);
  auto partial = hand_made(true);
  partial.stages.clip.clear();
  CHECK_THROWS_AS(interval_json(hand_made(false), &partial, options, peak, record()),
                  std::invalid_argument);
}
