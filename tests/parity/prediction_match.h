// Matching two lists of COCO-form predictions (ours and the reference's) for the parity tests.
//
// Why: identical weights must give the same detections, but the two sides list them in different
// orders and round differently (the reference writes 3 decimals), so each side is matched greedily
// against the other within those roundings.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace trainer::test {

struct Prediction {
  int64_t image = 0;
  int cls = 0;
  std::array<double, 4> xywh{};
  double score = 0;
  bool used = false;
};

// Greedy matching of `a` against `b`: same image and class, score within 3e-4, box within 0.02 px.
// Returns how many of `a` found a partner.
inline size_t matched(std::vector<Prediction>& a, std::vector<Prediction>& b) {
  for (auto& p : b) p.used = false;
  size_t count = 0;
  for (const auto& p : a) {
    for (auto& q : b) {
      if (q.used || q.image != p.image || q.cls != p.cls || std::abs(q.score - p.score) > 3e-4) {
        continue;
      }
      bool close = true;
      for (int k = 0; k < 4; ++k) close = close && std::abs(q.xywh[k] - p.xywh[k]) <= 0.02;
      if (close) {
        q.used = true;
        ++count;
        break;
      }
    }
  }
  return count;
}

// A predictions.json array (image_id, category_id, bbox, score) as Predictions; the class is the
// category id less `category_offset`.
inline std::vector<Prediction> predictions_from_json(const nlohmann::json& rows,
                                                     int category_offset) {
  std::vector<Prediction> out;
  for (const auto& d : rows) {
    Prediction p;
    p.image = d["image_id"].get<int64_t>();
    p.cls = d["category_id"].get<int>() - category_offset;
    for (int k = 0; k < 4; ++k) p.xywh[k] = d["bbox"][k].get<double>();
    p.score = d["score"].get<double>();
    out.push_back(p);
  }
  return out;
}

}  // namespace trainer::test
