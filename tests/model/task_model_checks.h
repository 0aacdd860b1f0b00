// Helpers shared by the task-head model tests (pose, OBB, segmentation): parameter counts, the
// reference's summary figures, the head's attribute order in the state dict, and the weights round
// trip (a tiny task model's weights saved and loaded into a freshly seeded one are equal to the
// bit, key by key; plain detection weights do not fit).
#pragma once

#include <doctest/doctest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "model/model_summary.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "test_support.h"

namespace trainer::test {

inline int64_t parameter_count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// The module attributes of layer 23 (the head) in state-dict order ("cv2", "cv3", "dfl", ...);
// `head_keys`, when given, gets the number of the head's keys.
inline std::vector<std::string> head_attribute_order(const torch::nn::Module& m,
                                                     int64_t* head_keys = nullptr) {
  std::vector<std::string> order;
  const std::string prefix = "model.23.";
  int64_t keys = 0;
  for (const auto& [k, t] : model::state_dict(m)) {
    if (k.rfind(prefix, 0) != 0) continue;
    ++keys;
    const std::string rest = k.substr(prefix.size());
    const std::string attr = rest.substr(0, rest.find('.'));
    if (order.empty() || order.back() != attr) order.push_back(attr);
  }
  if (head_keys) *head_keys = keys;
  return order;
}

// The summary of `m` (built at nc=80) at 640 px equals the reference's figures for its name:
// layers, modules, parameters and the unrounded GFLOPs. Returns the summary for further checks.
inline model::ModelSummary check_reference_summary(model::YoloModelImpl& m) {
  const auto ref = model::reference_figures(m.name());
  REQUIRE(ref.has_value());
  const auto s = model::summarize_model(m, 640);
  CHECK(s.layers == ref->layers);
  CHECK(s.modules == ref->modules);
  CHECK(s.parameters == ref->parameters);
  // The unrounded get_flops(model, 640): the same counts, so equal up to double rounding.
  CHECK(s.gflops == doctest::Approx(ref->gflops).epsilon(1e-9));
  return s;
}

// `prepare` runs on the first model before saving (e.g. a forward pass that fills BN statistics).
template <typename Prepare>
void check_task_weights_round_trip(core::Task task, Prepare prepare) {
  using namespace trainer::model;
  TempDir dir;
  for (const auto family : {ModelFamily::kYolo26, ModelFamily::kYolo11}) {
    CAPTURE(static_cast<int>(family));
    torch::manual_seed(5);
    auto a = build_tiny_yolo_model(family, 3, task);
    prepare(*a);
    save_weights(*a, dir / "task.pt");
    torch::manual_seed(6);
    auto b = build_tiny_yolo_model(family, 3, task);
    load_weights(*b, dir / "task.pt");
    const auto sa = state_dict(*a), sb = state_dict(*b);
    REQUIRE(sa.size() == sb.size());
    for (size_t i = 0; i < sa.size(); ++i) {
      CAPTURE(sa[i].first);
      CHECK(sa[i].first == sb[i].first);
      CHECK(torch::equal(sa[i].second, sb[i].second));
    }
    // A detection model's weights do not fit the task model (its head keys are missing).
    save_weights(*build_tiny_yolo_model(family, 3), dir / "det.pt");
    CHECK_THROWS(load_weights(*b, dir / "det.pt"));
  }
}

}  // namespace trainer::test
