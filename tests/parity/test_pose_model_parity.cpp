// Parity of the pose models with the reference's PoseModel (nc=1, kpt_shape [17, 3]): state-dict
// names, order and shapes, and with identical weights the raw keypoint outputs, the one-to-many
// decode (B, 4 + nc + 51, A) and YOLO26's end-to-end top-k rows (reference-tasks.md 2.4, 2.5).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "model/model_name.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "parity_oracle.h"
#include "parity_tensors.h"
#include "test_support.h"

using namespace trainer;
namespace fs = std::filesystem;

TEST_CASE("parity: pose state-dict keys and shapes, raw keypoints and decode (yolo26n/yolo11n)") {
  TRAINER_REQUIRE_ORACLE(python);
  test::TempDir dir;
  torch::manual_seed(21);
  const at::Tensor images = torch::rand({2, 3, 96, 128});
  test::save_tensors(dir / "inputs.pt", {{"images", images}});
  for (const std::string name : {"yolo26n-pose", "yolo11n-pose"}) {
    CAPTURE(name);
    torch::manual_seed(4);
    auto m = model::build_yolo_model(model::parse_model_name(name), 1);
    {
      torch::NoGradGuard no_grad;  // BN statistics off their initial values
      m->train();
      m->forward_for_loss(torch::rand({2, 3, 64, 64}));
    }
    const fs::path weights = dir / (name + ".pt"), ref_file = dir / (name + "_ref.pt");
    model::save_weights(*m, weights);
    test::run_oracle(*python, "pose_head '" + ref_file.string() + "' " + name + " 1 '" +
                                  weights.string() + "' '" + (dir / "inputs.pt").string() + "'");

    // Names, order and shapes.
    const auto keys = nlohmann::json::parse(test::read_text(ref_file.string() + ".json"));
    const auto ours = model::state_dict(*m);
    REQUIRE(ours.size() == keys["keys"].size());
    for (size_t i = 0; i < ours.size(); ++i) {
      CAPTURE(i);
      CHECK(ours[i].first == keys["keys"][i].get<std::string>());
      CHECK(ours[i].second.sizes().vec() == keys["shapes"][i].get<std::vector<int64_t>>());
    }

    m->eval();
    torch::NoGradGuard no_grad;
    const model::DetectOutput raw = m->forward_for_loss(images);
    const auto ref = test::load_tensors(ref_file);
    const double o2m = test::max_abs(test::flat_levels(raw.one2many), ref.at("one2many"));
    const double kpts =
        test::max_abs(test::flat_levels(raw.one2many_kpts), ref.at("one2many_kpts"));
    MESSAGE(name << " one2many max |diff| " << o2m << ", kpts " << kpts);
    CHECK(o2m < 1e-4);
    CHECK(kpts < 1e-4);
    if (m->end2end()) {
      CHECK(test::max_abs(test::flat_levels(raw.one2one_kpts), ref.at("one2one_kpts")) < 1e-4);
    }
    // The one-to-many decode: boxes xyxy (the reference's xywh converted), scores, keypoints.
    const at::Tensor decoded = m->head()->decode_output(raw, /*one2one=*/false);
    const at::Tensor r = ref.at("decoded");
    REQUIRE(r.size(1) == 4 + 1 + 51);
    const auto xy = r.slice(1, 0, 2), wh = r.slice(1, 2, 4);
    const at::Tensor ref_xyxy = torch::cat({xy - wh / 2, xy + wh / 2, r.slice(1, 4)}, 1);
    const double d = test::max_abs(decoded, ref_xyxy);
    const double dk = test::max_abs(decoded.slice(1, 5), r.slice(1, 5));
    MESSAGE(name << " decoded max |diff| " << d << ", keypoints " << dk);
    CHECK(d < 1e-3);  // pixels (up to ~128) and scores
    CHECK(dk < 1e-3);
    if (m->end2end()) {
      // The end-to-end top-k with the keypoints gathered at the chosen anchors.
      const at::Tensor top = m->predict_topk(images, 300);
      const double dt = test::max_abs(top, ref.at("topk"));
      MESSAGE(name << " top-k max |diff| " << dt);
      CHECK(dt < 1e-3);
    }
  }
}
