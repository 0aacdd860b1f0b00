// A check shared by the task-head model tests: a tiny task model's weights saved and loaded into
// a freshly seeded one are equal to the bit, key by key, and plain detection weights do not fit.
#pragma once

#include <doctest/doctest.h>
#include <torch/torch.h>

#include "model/detection_model.h"
#include "model/weights_io.h"
#include "test_support.h"

namespace trainer::test {

// `prepare` runs on the first model before saving (e.g. a forward pass that fills BN statistics).
template <typename Prepare>
void check_task_weights_round_trip(core::Task task, Prepare prepare) {
  using namespace trainer::model;
  TempDir dir;
  for (const auto family : {ModelFamily::kYolo26, ModelFamily::kYolo11}) {
    CAPTURE(static_cast<int>(family));
    torch::manual_seed(5);
    auto a = build_tiny_detection_model(family, 3, task);
    prepare(*a);
    save_weights(*a, dir / "task.pt");
    torch::manual_seed(6);
    auto b = build_tiny_detection_model(family, 3, task);
    load_weights(*b, dir / "task.pt");
    const auto sa = state_dict(*a), sb = state_dict(*b);
    REQUIRE(sa.size() == sb.size());
    for (size_t i = 0; i < sa.size(); ++i) {
      CAPTURE(sa[i].first);
      CHECK(sa[i].first == sb[i].first);
      CHECK(torch::equal(sa[i].second, sb[i].second));
    }
    // A detection model's weights do not fit the task model (its head keys are missing).
    save_weights(*build_tiny_detection_model(family, 3), dir / "det.pt");
    CHECK_THROWS(load_weights(*b, dir / "det.pt"));
  }
}

}  // namespace trainer::test
