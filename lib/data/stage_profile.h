// Where a loader's time goes: per-stage wall time summed over every worker thread.
//
// Why: to make the data pipeline faster one has to know which stage costs what (issue: decode,
// resize, mosaic assembly, warp, HSV, flip, collation). Each stage wraps itself in a StageScope;
// while profiling is off (the default) a scope costs one relaxed atomic load. `trainer bench data`
// turns it on and reports milliseconds per sample and shares.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace trainer::data {

enum class Stage { kRead, kDecode, kResize, kCacheRead, kMosaic, kWarp, kHsv, kFlip, kCollate };
constexpr int kStageCount = 9;
const char* stage_name(Stage stage);

void set_stage_profiling(bool on);
bool stage_profiling();
void reset_stage_totals();
// Nanoseconds and calls per stage since the last reset.
struct StageTotals {
  std::array<int64_t, kStageCount> ns{};
  std::array<int64_t, kStageCount> calls{};
};
StageTotals stage_totals();
void add_stage_time(Stage stage, int64_t ns);

class StageScope {
 public:
  explicit StageScope(Stage stage) : stage_(stage), on_(stage_profiling()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~StageScope() {
    if (on_) {
      add_stage_time(stage_, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now() - start_)
                                 .count());
    }
  }
  StageScope(const StageScope&) = delete;
  StageScope& operator=(const StageScope&) = delete;

 private:
  Stage stage_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace trainer::data
