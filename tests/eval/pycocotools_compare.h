// Shared by the pycocotools comparisons (boxes, keypoints, masks): finding the python that has
// pycocotools, and checking our stats on every result set of a reference script against its.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "data/coco_json.h"
#include "eval/coco_eval.h"
#include "eval/coco_results.h"
#include "test_support.h"

namespace trainer::test {

// The set-up script's venv (scripts/setup.sh installs pycocotools there), or $TRAINER_PYTHON;
// empty when neither has pycocotools.
inline std::string python_with_pycocotools() {
  const std::string python = project_python();
  std::string out;
  if (run_command("'" + python + "' -c 'import pycocotools, numpy'", &out) != 0) return "";
  return python;
}

// Evaluates every result set named in `reference` ({set: [stats]}, files `dir`/<set>.json) and
// checks each stat against pycocotools' to 1e-6, reporting how many are bit-identical.
inline void compare_with_pycocotools(const nlohmann::json& reference, const data::CocoFile& gt,
                                     const std::filesystem::path& dir,
                                     const eval::CocoEvalOptions& options, const char* what) {
  double max_diff = 0;
  size_t exact = 0, total = 0;
  for (const auto& [name, expected] : reference.items()) {
    CAPTURE(name);
    const auto detections = eval::read_coco_results(dir / (name + ".json"), gt);
    const eval::CocoStats stats = eval::evaluate_coco(gt, detections, options);
    REQUIRE(stats.num_stats() == expected.size());
    for (size_t i = 0; i < stats.num_stats(); ++i) {
      CAPTURE(i);
      const double want = expected.at(i).get<double>();
      CHECK(std::fabs(stats.stats[i] - want) <= 1e-6);
      max_diff = std::max(max_diff, std::fabs(stats.stats[i] - want));
      exact += stats.stats[i] == want;
      ++total;
    }
  }
  MESSAGE("pycocotools agreement (" << std::string(what) << "): " << exact << "/" << total
                                    << " stats bit-identical, max |diff| " << max_diff);
}

}  // namespace trainer::test
