// See abba.h.
#include "bench/abba.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "bench/peak_memory.h"

namespace trainer::bench {
namespace {

std::vector<double> values_of(const std::vector<ArmMeasurement>& arms) {
  std::vector<double> v;
  for (const auto& a : arms) v.push_back(a.value);
  return v;
}

Json arms_json(const std::vector<ArmMeasurement>& arms, const Summary& summary,
               bool include_details) {
  Json j = summary_json(summary);
  j["values"] = values_of(arms);
  Json peaks = Json::array();
  std::string kind;
  for (const auto& a : arms) {
    peaks.push_back(a.peak_bytes ? Json(*a.peak_bytes) : Json(nullptr));
    if (kind.empty()) kind = a.peak_kind;
  }
  j["peak_bytes"] = peaks;
  j["peak_kind"] = kind;
  if (include_details) {
    Json details = Json::array();
    for (const auto& a : arms) details.push_back(a.detail);
    j["details"] = details;
  }
  return j;
}

std::string peak_text(const std::vector<ArmMeasurement>& arms) {
  int64_t peak = -1;
  for (const auto& a : arms) {
    if (a.peak_bytes && *a.peak_bytes > peak) peak = *a.peak_bytes;
  }
  return peak < 0 ? std::string("-") : fmt::format("{:.1f} MiB", to_mib(peak));
}

}  // namespace

AbbaResult reduce_pairs(std::vector<ArmMeasurement> baseline, std::vector<ArmMeasurement> candidate,
                        const VerdictRule& rule) {
  if (baseline.empty() || baseline.size() != candidate.size()) {
    throw std::invalid_argument("ABBA: need the same number (>= 1) of baseline and candidate arms");
  }
  AbbaResult r;
  r.baseline = std::move(baseline);
  r.candidate = std::move(candidate);
  r.reductions = paired_reductions(values_of(r.baseline), values_of(r.candidate));
  r.baseline_summary = summarize(values_of(r.baseline));
  r.candidate_summary = summarize(values_of(r.candidate));
  r.reduction_summary = summarize(r.reductions);
  r.verdict = judge(r.reduction_summary, rule);
  return r;
}

AbbaResult run_abba(const ArmRunner& run_arm, const AbbaOptions& options,
                    const std::function<void(Arm, int, bool, const ArmMeasurement&)>& on_arm) {
  if (options.pairs < 1) throw std::invalid_argument("ABBA: pairs must be >= 1");
  if (options.warmup_arms < 0) throw std::invalid_argument("ABBA: warm-up arms must be >= 0");
  std::vector<ArmMeasurement> warmup, baseline, candidate;
  for (int i = 0; i < options.warmup_arms; ++i) {
    const Arm arm = i % 2 == 0 ? Arm::kBaseline : Arm::kCandidate;
    warmup.push_back(run_arm(arm, i / 2, true));
    if (on_arm) on_arm(arm, i / 2, true, warmup.back());
  }
  for (int i = 0; i < options.pairs; ++i) {
    baseline.push_back(run_arm(Arm::kBaseline, i, false));
    if (on_arm) on_arm(Arm::kBaseline, i, false, baseline.back());
    candidate.push_back(run_arm(Arm::kCandidate, i, false));
    if (on_arm) on_arm(Arm::kCandidate, i, false, candidate.back());
  }
  AbbaResult r = reduce_pairs(std::move(baseline), std::move(candidate), options.rule);
  r.warmup = std::move(warmup);
  return r;
}

Json abba_json(const AbbaResult& r, const AbbaOptions& options, const std::string& unit,
               bool include_details) {
  Json j;
  j["unit"] = unit;
  j["pairs"] = r.reductions.size();
  j["warmup_arms"] = r.warmup.size();
  j["order"] = "warm-up arms A, B, ... discarded; then A B A B ...";
  j["baseline"] = arms_json(r.baseline, r.baseline_summary, include_details);
  j["candidate"] = arms_json(r.candidate, r.candidate_summary, include_details);
  Json red = summary_json(r.reduction_summary);
  red["values"] = r.reductions;
  red["definition"] = "1 - candidate/baseline per pair";
  j["reduction"] = red;
  j["threshold"] = options.rule.threshold;
  j["verdict"] = verdict_name(r.verdict);
  j["warmup_values"] = values_of(r.warmup);
  return j;
}

const std::vector<std::string>& abba_json_keys() {
  static const std::vector<std::string> keys = {
      "unit",      "pairs",     "warmup_arms", "order",   "baseline",
      "candidate", "reduction", "threshold",   "verdict", "warmup_values"};
  return keys;
}

std::string abba_table(const AbbaResult& r, const AbbaOptions& options, const std::string& unit,
                       const std::string& baseline_label, const std::string& candidate_label) {
  std::string out;
  out += fmt::format("A = {}\nB = {}\n", baseline_label, candidate_label);
  out +=
      fmt::format("{:>5}  {:>12}  {:>12}  {:>10}\n", "pair", "A " + unit, "B " + unit, "1 - B/A");
  for (size_t i = 0; i < r.reductions.size(); ++i) {
    out += fmt::format("{:>5}  {:>12.3f}  {:>12.3f}  {:>9.2f}%\n", i + 1, r.baseline[i].value,
                       r.candidate[i].value, 100.0 * r.reductions[i]);
  }
  out += fmt::format("median A {:.3f} {} ({:.3f}-{:.3f}), B {:.3f} {} ({:.3f}-{:.3f})\n",
                     r.baseline_summary.median, unit, r.baseline_summary.min,
                     r.baseline_summary.max, r.candidate_summary.median, unit,
                     r.candidate_summary.min, r.candidate_summary.max);
  out += fmt::format("paired reduction median {:.2f}% (range {:.2f}% .. {:.2f}%)\n",
                     100.0 * r.reduction_summary.median, 100.0 * r.reduction_summary.min,
                     100.0 * r.reduction_summary.max);
  out += fmt::format("peak memory A {}, B {}\n", peak_text(r.baseline), peak_text(r.candidate));
  out += fmt::format("verdict: {} (threshold {:.1f}%, range must not cross zero)\n",
                     verdict_name(r.verdict), 100.0 * options.rule.threshold);
  return out;
}

}  // namespace trainer::bench
