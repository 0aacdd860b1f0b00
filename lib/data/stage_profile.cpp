// Global per-stage counters; see stage_profile.h.
// Tested by tests/data/test_data_cli.cpp: bench data JSON: per-stage ms/calls (warp, collate), no
//   decode stage with RAM cache (via binary).
#include "data/stage_profile.h"

#include <atomic>

namespace trainer::data {
namespace {

std::atomic<bool> g_on{false};
std::array<std::atomic<int64_t>, kStageCount> g_ns{};
std::array<std::atomic<int64_t>, kStageCount> g_calls{};

}  // namespace

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::kRead:
      return "read_file";
    case Stage::kDecode:
      return "decode";
    case Stage::kResize:
      return "resize";
    case Stage::kCacheRead:
      return "cache_read";
    case Stage::kMosaic:
      return "mosaic";
    case Stage::kWarp:
      return "warp";
    case Stage::kHsv:
      return "hsv";
    case Stage::kFlip:
      return "flip";
    case Stage::kCollate:
      return "collate";
  }
  return "?";
}

void set_stage_profiling(bool on) {
  g_on.store(on, std::memory_order_relaxed);
}
bool stage_profiling() {
  return g_on.load(std::memory_order_relaxed);
}

void reset_stage_totals() {
  for (int i = 0; i < kStageCount; ++i) {
    g_ns[i].store(0, std::memory_order_relaxed);
    g_calls[i].store(0, std::memory_order_relaxed);
  }
}

StageTotals stage_totals() {
  StageTotals t;
  for (int i = 0; i < kStageCount; ++i) {
    t.ns[i] = g_ns[i].load(std::memory_order_relaxed);
    t.calls[i] = g_calls[i].load(std::memory_order_relaxed);
  }
  return t;
}

void add_stage_time(Stage stage, int64_t ns) {
  const int i = static_cast<int>(stage);
  g_ns[i].fetch_add(ns, std::memory_order_relaxed);
  g_calls[i].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace trainer::data
