// Parity of the segmentation models with the reference's SegmentationModel (nc=3): state-dict
// names, order and shapes, and with identical weights the raw box/class outputs, the mask
// coefficients, the prototypes, the one-to-many decode (B, 4 + nc + 32, A), YOLO26's end-to-end
// top-k rows, and in training mode Proto26's semantic logits (reference-tasks.md 4.1).
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

TEST_CASE("parity: segment keys and shapes, coefficients, protos, decode, semantic logits") {
  TRAINER_REQUIRE_ORACLE(python);
  test::TempDir dir;
  torch::manual_seed(23);
  const at::Tensor images = torch::rand({2, 3, 96, 128});
  test::save_tensors(dir / "inputs.pt", {{"images", images}});
  const int nc = 3;
  for (const std::string name : {"yolo26n-seg", "yolo11n-seg"}) {
    CAPTURE(name);
    torch::manual_seed(5);
    auto m = model::build_yolo_model(model::parse_model_name(name), nc);
    {
      torch::NoGradGuard no_grad;  // BN statistics off their initial values
      m->train();
      m->forward_for_loss(torch::rand({2, 3, 64, 64}));
    }
    const fs::path weights = dir / (name + ".pt"), ref_file = dir / (name + "_ref.pt");
    model::save_weights(*m, weights);
    test::run_oracle(*python, "seg_head '" + ref_file.string() + "' " + name + " " +
                                  std::to_string(nc) + " '" + weights.string() + "' '" +
                                  (dir / "inputs.pt").string() + "'");

    const auto keys = nlohmann::json::parse(test::read_text(ref_file.string() + ".json"));
    const auto ours = model::state_dict(*m);
    REQUIRE(ours.size() == keys["keys"].size());
    for (size_t i = 0; i < ours.size(); ++i) {
      CAPTURE(i);
      CHECK(ours[i].first == keys["keys"][i].get<std::string>());
      CHECK(ours[i].second.sizes().vec() == keys["shapes"][i].get<std::vector<int64_t>>());
    }

    const auto ref = test::load_tensors(ref_file);
    torch::NoGradGuard no_grad;
    m->eval();
    const model::DetectOutput raw = m->forward_for_loss(images);
    REQUIRE(raw.protos.size() == 1);
    CHECK(raw.semantic.empty());  // training mode only
    const double o2m = test::max_abs(test::flat_levels(raw.one2many), ref.at("one2many"));
    const double coef =
        test::max_abs(test::flat_levels(raw.one2many_coef), ref.at("one2many_coef"));
    const double protos = test::max_abs(raw.protos[0], ref.at("protos"));
    MESSAGE(name << " one2many max |diff| " << o2m << ", coefficients " << coef << ", protos "
                 << protos);
    CHECK(o2m < 1e-4);
    CHECK(coef < 1e-4);
    CHECK(protos < 1e-4);
    if (m->end2end())
      CHECK(test::max_abs(test::flat_levels(raw.one2one_coef), ref.at("one2one_coef")) < 1e-4);

    // The one-to-many decode: boxes xyxy (the reference's xywh converted), scores, coefficients.
    const at::Tensor decoded = m->head()->decode_output(raw, /*one2one=*/false);
    const at::Tensor r = ref.at("decoded");
    REQUIRE(r.size(1) == 4 + nc + 32);
    const auto xy = r.slice(1, 0, 2), wh = r.slice(1, 2, 4);
    const at::Tensor ref_xyxy = torch::cat({xy - wh / 2, xy + wh / 2, r.slice(1, 4)}, 1);
    CHECK(test::max_abs(decoded, ref_xyxy) < 1e-3);
    if (m->end2end()) {
      const double dt = test::max_abs(m->predict_topk(images, 300), ref.at("topk"));
      MESSAGE(name << " top-k max |diff| " << dt);
      CHECK(dt < 1e-3);
    }

    // Training mode (BatchNorm held in eval mode so both sides use the same statistics).
    m->train();
    for (const auto& module : m->modules()) {
      if (std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(module)) module->eval();
    }
    const model::DetectOutput train = m->forward_for_loss(images);
    CHECK(test::max_abs(train.protos.at(0), ref.at("train_protos")) < 1e-4);
    if (m->end2end()) {
      REQUIRE(train.semantic.size() == 1);
      CHECK(train.semantic[0].sizes() == torch::IntArrayRef{2, nc, 12, 16});
      const double sem = test::max_abs(train.semantic[0], ref.at("semantic"));
      MESSAGE(name << " semantic max |diff| " << sem);
      CHECK(sem < 1e-4);
    } else {
      CHECK(train.semantic.empty());
    }
  }
}
