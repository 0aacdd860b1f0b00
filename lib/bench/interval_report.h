// The JSON of one `trainer bench interval` arm (benchmark-method.md sections 1, 2 and 5).
//
// Why: the interval command, the ABBA parent that reads its children's output, and the tests all
// agree on one schema: interval median/min/max and every raw interval, per-stage medians from the
// separate breakdown run, peak memory, and the run record.
#pragma once

#include <string>
#include <vector>

#include "bench/peak_memory.h"
#include "bench/run_record.h"
#include "engine/interval.h"

namespace trainer::bench {

// The stage names in loop order, as they appear in the JSON ("loader_wait", "h2d", ...).
const std::vector<std::string>& stage_names();

// The measured values of stage `name` in `stages`. Throws std::invalid_argument for an unknown
// name.
const std::vector<double>& stage_values(const engine::StageTimes& stages, const std::string& name);

// What the stages mean when the step is a replayed CUDA graph (the breakdown's "stage_note").
const char* graph_stage_note();

// `breakdown` may be null (--no-breakdown). Throws std::invalid_argument when `timed` has no
// intervals or a breakdown stage is empty.
Json interval_json(const engine::IntervalResult& timed, const engine::IntervalResult* breakdown,
                   const engine::IntervalOptions& options, const PeakMemory& peak,
                   const RunRecord& record);

// Keys interval_json() always writes at the top level.
const std::vector<std::string>& interval_json_keys();

// Throws std::runtime_error naming what is missing when `j` is not an interval result (the ABBA
// parent checks each child's output with it).
void check_interval_json(const Json& j);

// One line per stage with its median, and the interval median, for people (stderr).
std::string interval_table(const Json& j);

}  // namespace trainer::bench
