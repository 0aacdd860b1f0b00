// Parity of the model summary with the reference's for all ten detection models (nc=80, 640):
// parameters per layer and in total, gradients, the layer count and GFLOPs as `model.info()`
// computes them (tests/parity/reference_info.py runs the reference).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "model/model_name.h"
#include "model/model_summary.h"
#include "parity_oracle.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("parity: per-layer parameters, layers and GFLOPs of all ten detection models") {
  TRAINER_REQUIRE_ORACLE(python);
  const std::vector<std::string> names = {"yolo26n", "yolo26s", "yolo26m", "yolo26l", "yolo26x",
                                          "yolo11n", "yolo11s", "yolo11m", "yolo11l", "yolo11x"};
  std::string command = "YOLO_OFFLINE=1 YOLO_CONFIG_DIR=\"$(mktemp -d)\" '" + *python + "' '" +
                        std::string(TRAINER_SOURCE_DIR) + "/tests/parity/reference_info.py'";
  for (const auto& n : names) command += " " + n;
  std::string out;
  const int rc = test::run_command(command + " 2>/dev/null", &out);
  CAPTURE(out);
  REQUIRE(rc == 0);
  const auto ref = nlohmann::json::parse(out);
  for (const auto& name : names) {
    CAPTURE(name);
    auto model = model::build_yolo_model(model::parse_model_name(name), 80);
    const auto s = model::summarize_model(*model, 640);
    const auto& r = ref.at(name);
    CHECK(s.parameters == r["parameters"].get<int64_t>());
    CHECK(s.gradients == r["gradients"].get<int64_t>());
    CHECK(s.layers == r["layers"].get<int64_t>());
    CHECK(s.gflops == doctest::Approx(r["gflops"].get<double>()).epsilon(1e-6));
    const auto& per_layer = r["per_layer"];
    REQUIRE(s.rows.size() == per_layer.size());
    for (size_t i = 0; i < s.rows.size(); ++i) {
      CAPTURE(i);
      CHECK(s.rows[i].params == per_layer[i].get<int64_t>());
    }
  }
}
