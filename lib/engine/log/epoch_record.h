// One epoch's results as a typed record that writes both the results.csv header and its row.
//
// Why: the column list and the row used to be built in two places and could drift; users' plotting
// scripts read the reference's column names. The record yields the names and the values from the
// same list, in 8.4.190's order: epoch, time, train/<loss items>, <task metrics>, val/<loss
// items>, lr/pg0..N (one per parameter group), then trainer's own extras (the COCO protocol's AP,
// AP50), which come last so the reference's prefix of columns is the same. Which loss items and
// metrics there are is the task's business (engine/task/task_definition.h): the record only lays
// them out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainer::engine {

// The columns a task contributes.
struct EpochColumns {
  std::vector<std::string> loss_names;    // "box_loss", ...: written as train/<name>, val/<name>
  std::vector<std::string> metric_names;  // "metrics/precision(B)", ... (the reference's metric)
  std::vector<std::string> extra_names;   // trainer's own, after the lr columns: "metrics/coco/AP"
};

// One validation's values, in the order of EpochColumns' names.
struct EpochValidation {
  std::vector<double> metrics;     // one per metric_names
  std::vector<double> extras;      // one per extra_names (NaN where not computed)
  std::vector<double> loss_items;  // one per loss_names; empty when no val loss
};

struct EpochRecord {
  EpochColumns columns;
  int64_t epoch = 0;  // 1-based, as written
  double seconds = 0;
  std::vector<double> train_loss;             // one per columns.loss_names
  std::optional<EpochValidation> validation;  // none: no metric, val loss or extra measured
  std::vector<double> learning_rates;         // one per parameter group

  // (column, value) in file order, NaN where nothing was measured (an epoch without validation,
  // an extra not computed): what TensorBoard skips. Throws std::logic_error when a value list and
  // its names differ in length.
  std::vector<std::pair<std::string, double>> cells() const;
  std::vector<std::string> header() const;
  // results.csv's row: 0 where nothing was measured, as the reference writes before its first
  // validation (spreadsheets and plotting tools choke on "nan"); a loss that is NaN stays NaN.
  std::vector<double> row() const;
  // The value of the column `name`; throws std::out_of_range for an unknown column.
  double value(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, double>> cells_with(double missing) const;
};

}  // namespace trainer::engine
