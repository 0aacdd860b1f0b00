// See interval_report.h.
#include "bench/interval_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "bench/stats.h"

namespace trainer::bench {
const std::vector<std::string>& stage_names() {
  static const std::vector<std::string> names = {
      "loader_wait", "h2d", "forward_loss", "backward", "clip", "optimizer", "ema"};
  return names;
}

const std::vector<double>& stage_values(const engine::StageTimes& s, const std::string& name) {
  if (name == "loader_wait") return s.loader_wait;
  if (name == "h2d") return s.h2d;
  if (name == "forward_loss") return s.forward_loss;
  if (name == "backward") return s.backward;
  if (name == "clip") return s.clip;
  if (name == "optimizer") return s.optimizer;
  if (name == "ema") return s.ema;
  throw std::invalid_argument("unknown stage '" + name + "'");
}

const char* graph_stage_note() {
  return "cuda_graph: each stage is a replay, so forward_loss, clip and ema are 0: backward is "
         "forward + loss + backward (with the batch's copy into the static buffers) and optimizer "
         "is clip + step + EMA; h2d is the targets' packing and host-to-device copy. The first 4 "
         "batches (3 warm-up, 1 capture) run eagerly: a warmup of at least 4 keeps them out";
}

Json interval_json(const engine::IntervalResult& timed, const engine::IntervalResult* breakdown,
                   const engine::IntervalOptions& options, const PeakMemory& peak,
                   const RunRecord& record) {
  if (timed.intervals_ms.empty()) throw std::invalid_argument("interval result has no intervals");
  Json j;
  j["benchmark"] = "interval";
  j["unit"] = "ms";
  j["device"] = timed.device;
  j["precision"] = timed.precision;
  j["precision_reason"] = timed.precision_reason;
  j["warmup"] = options.warmup;
  j["measure"] = options.measure;
  j["batches_per_epoch"] = timed.batches_per_epoch;
  j["interval_ms"] = summary_json(summarize(timed.intervals_ms));
  j["intervals_ms"] = timed.intervals_ms;
  if (breakdown != nullptr) {
    Json stages;
    Json raw;
    double stage_sum = 0.0;
    for (const auto& name : stage_names()) {
      const auto& values = stage_values(breakdown->stages, name);
      if (values.empty()) throw std::invalid_argument("breakdown stage '" + name + "' is empty");
      stages[name] = summary_json(summarize(values));
      stage_sum += stages[name]["median"].get<double>();
      raw[name] = values;
    }
    Json b;
    b["note"] = "separate run with a device sync at every stage edge; not the timed interval";
    b["cuda_graph"] = breakdown->cuda_graph;
    if (breakdown->cuda_graph) b["stage_note"] = graph_stage_note();
    b["interval_ms"] = summary_json(summarize(breakdown->intervals_ms));
    b["stages_ms"] = stages;
    b["sum_of_stage_medians_ms"] = stage_sum;
    b["raw_ms"] = raw;
    b["intervals_ms"] = breakdown->intervals_ms;
    j["breakdown"] = b;
  } else {
    j["breakdown"] = nullptr;
  }
  Json p;
  p["kind"] = peak.kind;
  p["device"] = peak.device;
  p["bytes"] = peak.bytes;
  p["mib"] = to_mib(peak.bytes);
  p["since_reset"] = peak.since_reset;
  p["window"] = "the timed run only (reset before it, read after it)";
  j["peak_memory"] = p;
  j["record"] = record_to_json(record);
  return j;
}

const std::vector<std::string>& interval_json_keys() {
  static const std::vector<std::string> keys = {"benchmark",
                                                "unit",
                                                "device",
                                                "precision",
                                                "precision_reason",
                                                "warmup",
                                                "measure",
                                                "batches_per_epoch",
                                                "interval_ms",
                                                "intervals_ms",
                                                "breakdown",
                                                "peak_memory",
                                                "record"};
  return keys;
}

void check_interval_json(const Json& j) {
  auto missing = missing_fields(j, interval_json_keys());
  if (missing.empty()) {
    for (const auto& key : missing_fields(j["interval_ms"], {"median", "min", "max"})) {
      missing.push_back("interval_ms." + key);
    }
    for (const auto& key : missing_fields(j["peak_memory"], {"kind", "bytes"})) {
      missing.push_back("peak_memory." + key);
    }
    for (const auto& key : missing_fields(j["record"], record_json_keys())) {
      missing.push_back("record." + key);
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw std::runtime_error("not an interval result: missing " + list);
  }
}

std::string interval_table(const Json& j) {
  std::string out = fmt::format(
      "complete interval: median {:.2f} ms (min {:.2f}, max {:.2f}) over {} intervals after {} "
      "warm-up; peak memory {:.1f} MiB ({})\n",
      j["interval_ms"]["median"].get<double>(), j["interval_ms"]["min"].get<double>(),
      j["interval_ms"]["max"].get<double>(), j["intervals_ms"].size(), j["warmup"].get<int>(),
      j["peak_memory"]["mib"].get<double>(), j["peak_memory"]["kind"].get<std::string>());
  if (!j["breakdown"].is_null()) {
    out += fmt::format("breakdown (separate synchronised run, interval median {:.2f} ms):\n",
                       j["breakdown"]["interval_ms"]["median"].get<double>());
    if (j["breakdown"].contains("stage_note")) {
      out += fmt::format("  ({})\n", j["breakdown"]["stage_note"].get<std::string>());
    }
    for (const auto& name : stage_names()) {
      out += fmt::format("  {:<13} {:>10.3f} ms\n", name,
                         j["breakdown"]["stages_ms"][name]["median"].get<double>());
    }
  }
  return out;
}

}  // namespace trainer::bench
