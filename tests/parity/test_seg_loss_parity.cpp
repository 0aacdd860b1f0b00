// Parity of the segmentation losses with the reference on identical raw head outputs: the total,
// every item and the gradient of every raw output (coefficients, prototypes, semantic logits
// included) for E2ELoss over SegmentLoss26 (YOLO26, mask-aware assigner, semantic loss) and
// v8SegmentationLoss (YOLO11), with overlapping and per-object masks, as the reference's
// SegmentationModel.init_criterion builds them.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "loss/segment_loss.h"
#include "model/weights_io.h"
#include "parity_oracle.h"
#include "parity_tensors.h"
#include "test_support.h"

using namespace trainer;
namespace fs = std::filesystem;

namespace {

using SegNamed = test::NamedTensors;

// Masks at (h, w) for the label rows: each object an ellipse inside its box. overlap: one index
// image per batch image (row j of the image = j + 1, later rows drawn over earlier ones); else one
// 0/1 mask per row.
at::Tensor make_masks(const at::Tensor& labels, int64_t b, int64_t h, int64_t w, bool overlap) {
  const int64_t n = labels.size(0);
  auto per_row = torch::zeros({n, h, w}, torch::kUInt8);
  const auto ys = torch::arange(h, torch::kFloat).view({h, 1}) + 0.5f;
  const auto xs = torch::arange(w, torch::kFloat).view({1, w}) + 0.5f;
  for (int64_t r = 0; r < n; ++r) {
    const float cx = labels[r][2].item<float>() * w, cy = labels[r][3].item<float>() * h;
    const float rx = labels[r][4].item<float>() * w / 2, ry = labels[r][5].item<float>() * h / 2;
    const auto inside = ((xs - cx) / rx).pow(2) + ((ys - cy) / ry).pow(2) <= 1;
    per_row[r].copy_(inside.to(torch::kUInt8));
  }
  if (!overlap) return per_row;
  auto index = torch::zeros({b, h, w}, torch::kInt32);
  std::vector<int> seen(static_cast<size_t>(b), 0);
  for (int64_t r = 0; r < n; ++r) {
    const int64_t img = labels[r][0].item<int64_t>();
    const int value = ++seen[static_cast<size_t>(img)];
    index[img].masked_fill_(per_row[r].to(torch::kBool), value);
  }
  return index;
}

}  // namespace

TEST_CASE(
    "parity: segmentation losses (yolo26n-seg E2E, yolo11n-seg, overlap and per-object masks)") {
  TRAINER_REQUIRE_ORACLE(python);
  const int64_t nc = 3, b = 2, nm = 32;
  const std::vector<double> strides = {8, 16, 32};
  // Five objects on 64 x 64 inputs; image 1 has two overlapping ones.
  const auto labels = torch::tensor({0.0f, 1.0f, 0.5f,  0.5f,  0.5f, 0.6f,   //
                                     0.0f, 0.0f, 0.25f, 0.3f,  0.3f, 0.35f,  //
                                     0.0f, 2.0f, 0.7f,  0.75f, 0.4f, 0.3f,   //
                                     1.0f, 0.0f, 0.6f,  0.4f,  0.6f, 0.6f,   //
                                     1.0f, 1.0f, 0.55f, 0.45f, 0.3f, 0.3f})
                          .view({5, 6});
  for (const std::string name : {"yolo26n-seg", "yolo11n-seg"}) {
    for (const bool overlap : {true, false}) {
      CAPTURE(name);
      CAPTURE(overlap);
      const bool yolo26 = name.rfind("yolo26", 0) == 0;
      const int reg_max = yolo26 ? 1 : 16;
      test::TempDir dir;
      torch::manual_seed(40 + (yolo26 ? 1 : 0) + (overlap ? 2 : 0));
      const auto masks = make_masks(labels, b, 16, 16, overlap);
      SegNamed saved = {{"labels", labels}, {"masks", masks}};
      model::DetectOutput out;
      const auto make = [&](const std::string& branch, std::vector<at::Tensor>& levels,
                            std::vector<at::Tensor>& coef) {
        for (int l = 0; l < 3; ++l) {
          const int64_t side = 8 >> l;
          const auto bx = reg_max == 1 ? torch::rand({b, 4, side, side}) * 2.5 + 0.3
                                       : torch::randn({b, 4 * reg_max, side, side});
          const auto box = bx.requires_grad_();
          const auto cls = (torch::randn({b, nc, side, side}) - 1).requires_grad_();
          coef.push_back(torch::randn({b, nm, side, side}).requires_grad_());
          saved.emplace_back(branch + "_box_" + std::to_string(l), box);
          saved.emplace_back(branch + "_cls_" + std::to_string(l), cls);
          saved.emplace_back(branch + "_coef_" + std::to_string(l), coef.back());
          levels.push_back(torch::cat({box, cls}, 1));
        }
      };
      make("o2m", out.one2many, out.one2many_coef);
      if (yolo26) make("o2o", out.one2one, out.one2one_coef);
      const auto proto = (torch::randn({b, nm, 16, 16}) * 0.5).requires_grad_();
      saved.emplace_back("proto", proto);
      out.protos = {proto};
      if (yolo26) {
        const auto semantic = torch::randn({b, nc, 8, 8}).requires_grad_();
        saved.emplace_back("semantic", semantic);
        out.semantic = {semantic};
      }
      test::save_tensors(dir / "inputs.pt", saved);

      loss::SegmentLoss criterion(nc, reg_max, strides, loss::LossGains{}, /*end2end=*/yolo26);
      const auto result = criterion(out, loss::LossTargets{labels, {}, {}, masks, overlap}, b);
      test::run_oracle(*python, "seg_loss '" + (dir / "ref.pt").string() + "' " + name + " " +
                                    std::to_string(nc) + " " + (overlap ? "1" : "0") + " '" +
                                    (dir / "inputs.pt").string() + "'");
      const auto ref = test::load_tensors(dir / "ref.pt");
      MESSAGE(name << " overlap " << overlap << " total " << result.total.item<double>() << " / "
                   << ref.at("total").item<double>() << "\n items " << result.items << "\n ref   "
                   << ref.at("items"));
      CHECK(result.total.item<double>() ==
            doctest::Approx(ref.at("total").item<double>()).epsilon(1e-5));
      const auto ref_items = ref.at("items").to(torch::kDouble);
      const double d = ((result.items.to(torch::kDouble) - ref_items).abs() / (ref_items.abs() + 1))
                           .max()
                           .item<double>();
      MESSAGE(name << " items max |diff| / (|ref| + 1) " << d);
      CHECK(d < 1e-5);
      result.total.backward();
      double worst = 0;
      int count = 0;
      for (const auto& [key, tensor] : saved) {
        if (key.rfind("o2", 0) != 0 && key != "proto" && key != "semantic") continue;
        CAPTURE(key);
        REQUIRE(tensor.grad().defined());
        const auto& expect = ref.at("grad." + key);
        const double scale = expect.abs().max().item<double>() + 1e-3;
        worst = std::max(worst, test::max_abs(tensor.grad(), expect) / scale);
        ++count;
      }
      MESSAGE(name << " " << count << " gradients, max |diff| / max |ref| " << worst);
      CHECK(worst < 1e-4);
      std::string expected = "{\"names\": [";
      for (const auto& n : criterion.item_names())
        expected += (expected.back() == '[' ? "\"" : ", \"") + n + "\"";
      CHECK(test::read_text(dir / "ref.pt.json") == expected + "]}");
    }
  }
}
