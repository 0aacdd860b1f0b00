// See epoch_record.h.
#include "engine/log/epoch_record.h"

#include <cmath>
#include <stdexcept>

namespace trainer::engine {
namespace {

void check_length(size_t values, size_t names, const char* what) {
  if (values != names) {
    throw std::logic_error(std::string("EpochRecord: ") + what + " and its names differ in length");
  }
}

}  // namespace

std::vector<std::pair<std::string, double>> EpochRecord::cells() const {
  return cells_with(std::nan(""));
}

std::vector<std::pair<std::string, double>> EpochRecord::cells_with(double missing) const {
  const EpochColumns& c = columns;
  check_length(train_loss.size(), c.loss_names.size(), "train_loss");
  const EpochValidation* v = validation ? &*validation : nullptr;
  if (v) {
    check_length(v->metrics.size(), c.metric_names.size(), "validation.metrics");
    check_length(v->extras.size(), c.extra_names.size(), "validation.extras");
    if (!v->loss_items.empty()) {
      check_length(v->loss_items.size(), c.loss_names.size(), "validation.loss_items");
    }
  }
  std::vector<std::pair<std::string, double>> out;
  out.emplace_back("epoch", static_cast<double>(epoch));
  out.emplace_back("time", seconds);
  for (size_t k = 0; k < c.loss_names.size(); ++k) {
    out.emplace_back("train/" + c.loss_names[k], train_loss[k]);
  }
  for (size_t k = 0; k < c.metric_names.size(); ++k) {
    out.emplace_back(c.metric_names[k], v ? v->metrics[k] : missing);
  }
  for (size_t k = 0; k < c.loss_names.size(); ++k) {
    const bool has = v && !v->loss_items.empty();
    out.emplace_back("val/" + c.loss_names[k], has ? v->loss_items[k] : missing);
  }
  for (size_t g = 0; g < learning_rates.size(); ++g) {
    out.emplace_back("lr/pg" + std::to_string(g), learning_rates[g]);
  }
  for (size_t k = 0; k < c.extra_names.size(); ++k) {
    const bool computed = v && !std::isnan(v->extras[k]);
    out.emplace_back(c.extra_names[k], computed ? v->extras[k] : missing);
  }
  return out;
}

std::vector<std::string> EpochRecord::header() const {
  std::vector<std::string> names;
  for (auto& cell : cells()) names.push_back(cell.first);
  return names;
}

std::vector<double> EpochRecord::row() const {
  std::vector<double> values;
  for (auto& cell : cells_with(0.0)) values.push_back(cell.second);
  return values;
}

double EpochRecord::value(const std::string& name) const {
  for (auto& cell : cells()) {
    if (cell.first == name) return cell.second;
  }
  throw std::out_of_range("EpochRecord: no column '" + name + "'");
}

}  // namespace trainer::engine
