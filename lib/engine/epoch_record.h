// One epoch's results as a typed record that writes both the results.csv header and its row.
//
// Why: the column list and the row used to be built in two places and could drift; users' plotting
// scripts read the reference's column names. The record yields the names and the values from the
// same list, in 8.4.190's order: epoch, time, train/<loss items>, metrics/*(B), val/<loss items>,
// lr/pg0..N (one per parameter group), then trainer's own extras (the COCO protocol's AP, AP50),
// which come last so the reference's prefix of columns is the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainer::engine {

// The detection loss items' names: the third is "l1_loss" for a reg_max = 1 head (YOLO26) and
// "dfl_loss" otherwise, as the reference names them.
std::vector<std::string> detection_loss_names(int reg_max);

struct EpochValidation {
  double precision = 0, recall = 0, map50 = 0, map50_95 = 0;  // the reference's metric
  std::optional<double> coco_ap, coco_ap50;                   // the COCO protocol
  std::vector<double> loss_items;                             // empty when no val loss
};

struct EpochRecord {
  int64_t epoch = 0;  // 1-based, as written
  double seconds = 0;
  std::vector<std::string> loss_names;
  std::vector<double> train_loss;
  std::optional<EpochValidation> validation;  // none: metric columns are NaN
  std::vector<double> learning_rates;         // one per parameter group

  // (column, value) in file order; header() and row() are its two halves.
  std::vector<std::pair<std::string, double>> cells() const;
  std::vector<std::string> header() const;
  std::vector<double> row() const;
};

}  // namespace trainer::engine
