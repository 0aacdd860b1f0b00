// `trainer predict` end to end: sources -> batches -> predictor -> annotated images or video,
// labels/*.txt, predictions.json, one console line per image and the speed summary.
//
// Why one function: the CLI only parses the arguments; tests run the same path on a tiny model.
#pragma once

#include <filesystem>
#include <iosfwd>

#include "predict/predict_options.h"
#include "predict/predictor.h"

namespace trainer::predict {

struct PredictSummary {
  std::filesystem::path save_dir{};
  int64_t images{0};   // images and video frames predicted
  int64_t skipped{0};  // unreadable images
  int64_t labels{0};   // label files written (save_txt)
  Timing timing{};     // summed over images
};

// Runs the prediction `options` describe, printing the reference's per-image lines and summary to
// `out`. Throws core::ConfigError / core::InputError for bad options, weights or sources (before
// the run folder exists when the problem is known up front).
PredictSummary run_predict(const PredictOptions& options, std::ostream& out);

}  // namespace trainer::predict
