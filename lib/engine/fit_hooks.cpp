// See fit_hooks.h.
#include "engine/fit_hooks.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "core/error.h"
#include "core/fault_hooks.h"

namespace trainer::engine {

NonFiniteFault parse_non_finite_fault(const std::string& spec) {
  NonFiniteFault f;
  long long e = -1, b = -1;
  char extra = 0;
  if (std::sscanf(spec.c_str(), "%d:%lld:%lld%c", &f.rank, &e, &b, &extra) != 3) {
    throw core::ConfigError("TRAINER_FAULT_NON_FINITE: '" + spec + "' is not RANK:EPOCH:BATCH");
  }
  f.epoch = e;
  f.batch = b;
  return f;
}

std::vector<KillPoint> parse_kill_points(const std::string& spec) {
  std::vector<KillPoint> points;
  std::stringstream list(spec);
  std::string entry;
  while (std::getline(list, entry, ',')) {
    KillPoint p;
    long long e = -1, b = -1;
    char extra = 0;
    if (std::sscanf(entry.c_str(), "%d:%d:%lld:v%lld%c", &p.attempt, &p.rank, &e, &b, &extra) ==
        4) {
      p.validation = true;
    } else if (std::sscanf(entry.c_str(), "%d:%d:%lld:%lld%c", &p.attempt, &p.rank, &e, &b,
                           &extra) != 4) {
      throw core::ConfigError("TRAINER_FAULT_KILL: '" + entry +
                              "' is not ATTEMPT:RANK:EPOCH:BATCH or ATTEMPT:RANK:EPOCH:vBATCH");
    }
    p.epoch = e;
    p.batch = b;
    points.push_back(p);
  }
  return points;
}

namespace {

std::function<void(int64_t, int64_t)> kill_at(const std::vector<KillPoint>& points,
                                              bool validation) {
  std::vector<KillPoint> mine;
  for (const auto& p : points)
    if (p.validation == validation) mine.push_back(p);
  if (mine.empty()) return {};
  return [mine](int64_t epoch, int64_t batch) {
    for (const auto& p : mine) {
      if (p.epoch == epoch && p.batch == batch) ::raise(SIGKILL);
    }
  };
}

}  // namespace

FitHooks fault_hooks_from_environment(int rank) {
  FitHooks hooks;
  if (const auto setting = core::fault_setting("TRAINER_FAULT_NON_FINITE")) {
    const NonFiniteFault f = parse_non_finite_fault(*setting);
    if (f.rank == rank) {
      auto fired = std::make_shared<bool>(false);
      hooks.inject_non_finite = [f, fired](int64_t epoch, int64_t batch) {
        if (*fired || epoch != f.epoch || batch != f.batch) return false;
        *fired = true;
        return true;
      };
    }
  }
  if (const auto setting = core::fault_setting("TRAINER_FAULT_KILL")) {
    const char* attempt_text = std::getenv("TORCHELASTIC_RESTART_COUNT");
    const int attempt = attempt_text ? std::atoi(attempt_text) : 0;
    std::vector<KillPoint> mine;
    for (const auto& p : parse_kill_points(*setting))
      if (p.attempt == attempt && p.rank == rank) mine.push_back(p);
    hooks.before_batch = kill_at(mine, /*validation=*/false);
    hooks.after_validation_batch = kill_at(mine, /*validation=*/true);
  }
  return hooks;
}

}  // namespace trainer::engine
