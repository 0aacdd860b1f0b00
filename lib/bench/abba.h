// ABBA pairs: alternate baseline (A) and candidate (B) arms and reduce them to a claim
// (benchmark-method.md section 3).
//
// Why: one driver for every comparison (interval arms in fresh processes, complete short fits)
// keeps the order, the discarded warm-up arms, the paired reductions and the verdict identical.
// An arm is anything that returns one number (an interval median in ms, a fit's wall seconds).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/run_record.h"
#include "bench/stats.h"

namespace trainer::bench {

enum class Arm { kBaseline, kCandidate };

struct ArmMeasurement {
  double value = 0.0;                 // the arm's number (lower is better)
  std::optional<int64_t> peak_bytes;  // the arm's peak memory, when known
  std::string peak_kind;              // "cuda_peak_allocated", "cpu_peak_rss", "child_max_rss"
  Json detail;                        // the arm's own JSON (an interval result), or null
};

// Runs one arm; `index` counts arms of that kind from 0 (warm-up arms have their own count).
using ArmRunner = std::function<ArmMeasurement(Arm arm, int index, bool warmup)>;

struct AbbaOptions {
  int pairs = 5;
  int warmup_arms = 1;  // discarded arms before the pairs, alternating A, B, A, ...
  VerdictRule rule;
};

struct AbbaResult {
  std::vector<ArmMeasurement> warmup;               // in run order
  std::vector<ArmMeasurement> baseline, candidate;  // pair i = (baseline[i], candidate[i])
  std::vector<double> reductions;                   // 1 - B/A per pair
  Summary baseline_summary, candidate_summary, reduction_summary;
  Verdict verdict = Verdict::kCrossesZero;
};

// Order: warm-up arms A, B, A, ... (`warmup_arms` of them), then A B A B ... for `pairs` pairs.
// `on_arm` (optional) is called after each arm for progress logging.
AbbaResult run_abba(const ArmRunner& run_arm, const AbbaOptions& options,
                    const std::function<void(Arm, int, bool, const ArmMeasurement&)>& on_arm = {});

// Reduces finished arms (pairs in order) to the claim; used by run_abba and by in-process
// benchmarks that measure their own arms. Throws std::invalid_argument for no pairs.
AbbaResult reduce_pairs(std::vector<ArmMeasurement> baseline, std::vector<ArmMeasurement> candidate,
                        const VerdictRule& rule = {});

// The claim as JSON: baseline/candidate {median, min, max, values, peak_bytes...}, reductions
// {values, median, min, max}, threshold, verdict, warm-up arm values, and each arm's detail.
// `unit` names the value's unit ("ms", "s").
Json abba_json(const AbbaResult& result, const AbbaOptions& options, const std::string& unit,
               bool include_details = true);

// Keys abba_json() always writes (for the schema test).
const std::vector<std::string>& abba_json_keys();

// A readable table: one row per pair (A, B, reduction), then medians, range and verdict.
std::string abba_table(const AbbaResult& result, const AbbaOptions& options,
                       const std::string& unit, const std::string& baseline_label,
                       const std::string& candidate_label);

}  // namespace trainer::bench
