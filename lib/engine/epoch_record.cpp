// See epoch_record.h.
#include "engine/epoch_record.h"

#include <cmath>
#include <stdexcept>

namespace trainer::engine {

std::vector<std::string> detection_loss_names(int reg_max) {
  return {"box_loss", "cls_loss", reg_max > 1 ? "dfl_loss" : "l1_loss"};
}

std::vector<std::pair<std::string, double>> EpochRecord::cells() const {
  if (train_loss.size() != loss_names.size()) {
    throw std::logic_error("EpochRecord: train_loss and loss_names differ in length");
  }
  const double nan = std::nan("");
  std::vector<std::pair<std::string, double>> out;
  out.emplace_back("epoch", static_cast<double>(epoch));
  out.emplace_back("time", seconds);
  for (size_t k = 0; k < loss_names.size(); ++k) {
    out.emplace_back("train/" + loss_names[k], train_loss[k]);
  }
  const EpochValidation* v = validation ? &*validation : nullptr;
  out.emplace_back("metrics/precision(B)", v ? v->precision : nan);
  out.emplace_back("metrics/recall(B)", v ? v->recall : nan);
  out.emplace_back("metrics/mAP50(B)", v ? v->map50 : nan);
  out.emplace_back("metrics/mAP50-95(B)", v ? v->map50_95 : nan);
  for (size_t k = 0; k < loss_names.size(); ++k) {
    const bool has = v && k < v->loss_items.size();
    out.emplace_back("val/" + loss_names[k], has ? v->loss_items[k] : nan);
  }
  for (size_t g = 0; g < learning_rates.size(); ++g) {
    out.emplace_back("lr/pg" + std::to_string(g), learning_rates[g]);
  }
  out.emplace_back("metrics/coco/AP", v && v->coco_ap ? *v->coco_ap : nan);
  out.emplace_back("metrics/coco/AP50", v && v->coco_ap50 ? *v->coco_ap50 : nan);
  return out;
}

std::vector<std::string> EpochRecord::header() const {
  std::vector<std::string> names;
  for (auto& cell : cells()) names.push_back(cell.first);
  return names;
}

std::vector<double> EpochRecord::row() const {
  std::vector<double> values;
  for (auto& cell : cells()) values.push_back(cell.second);
  return values;
}

}  // namespace trainer::engine
