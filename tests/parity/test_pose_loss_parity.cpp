// Parity of the pose losses with the reference on identical raw head outputs: the RealNVP flow's
// log-density with identical weights, and the total and every item of v8PoseLoss (YOLO11) and
// E2ELoss over PoseLoss26 (YOLO26) as the reference's PoseModel.init_criterion builds them.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "loss/pose_loss.h"
#include "model/real_nvp.h"
#include "model/weights_io.h"
#include "parity_oracle.h"
#include "parity_tensors.h"
#include "test_support.h"

using namespace trainer;
namespace fs = std::filesystem;

namespace {

using Named = test::NamedTensors;

// A flow with weights far from the gain-0.01 init, so that log_prob is not the plain normal.
model::RealNvp seeded_flow(Named& saved) {
  model::RealNvp flow;
  {
    torch::NoGradGuard no_grad;
    for (auto& p : flow->parameters()) p.copy_(torch::randn_like(p) * 0.3);
  }
  for (const auto& item : flow->named_parameters())
    saved.emplace_back("flow." + item.key(), item.value());
  for (const auto& item : flow->named_buffers())
    saved.emplace_back("flow." + item.key(), item.value());
  return flow;
}

}  // namespace

TEST_CASE("parity: RealNVP log_prob with identical weights") {
  TRAINER_REQUIRE_ORACLE(python);
  test::TempDir dir;
  torch::manual_seed(21);
  Named saved;
  auto flow = seeded_flow(saved);
  const auto x = torch::randn({64, 2}) * 3;
  saved.emplace_back("x", x);
  test::save_tensors(dir / "flow.pt", saved);
  test::run_oracle(
      *python, "realnvp '" + (dir / "out.pt").string() + "' '" + (dir / "flow.pt").string() + "'");
  const auto ref = test::load_tensors(dir / "out.pt").at("log_prob");
  const auto got = flow->log_prob(x).detach();
  const double d = test::max_abs(got, ref);
  MESSAGE("RealNVP log_prob max |diff| " << d);
  CHECK(d < 1e-4);
}

TEST_CASE("parity: pose losses (yolo26n-pose E2E + RLE, yolo11n-pose) on fixed raw outputs") {
  TRAINER_REQUIRE_ORACLE(python);
  const int64_t nc = 2, b = 2;
  const std::vector<double> strides = {8, 16, 32};
  // Four objects, with keypoints inside their boxes and every visibility (0, 1, 2).
  const auto labels = torch::tensor({0.0f, 1.0f, 0.5f,  0.5f,  0.5f, 0.6f,   //
                                     0.0f, 0.0f, 0.25f, 0.3f,  0.2f, 0.25f,  //
                                     1.0f, 0.0f, 0.6f,  0.4f,  0.5f, 0.6f,   //
                                     1.0f, 1.0f, 0.2f,  0.75f, 0.3f, 0.4f})
                          .view({4, 6});
  struct Case {
    std::string name;
    int64_t k, nd;
    std::vector<double> sigmas;  // the dataset's kpt_oks_sigmas (empty: the default rule)
  };
  // COCO-17 (OKS_SIGMA, RLE_WEIGHT); 5 x 2 keypoints without visibility and a dataset's sigmas
  // (no kobj, the 4-channel RLE path, RLE weights 1); 4 x 3 with the 1 / K sigmas.
  const std::vector<Case> cases = {{"yolo26n-pose", 17, 3, {}},
                                   {"yolo11n-pose", 17, 3, {}},
                                   {"yolo26n-pose", 5, 2, {0.3, 0.2, 0.5, 0.4, 0.6}},
                                   {"yolo11n-pose", 4, 3, {}}};
  for (const auto& [name, k, nd, sigmas] : cases) {
    CAPTURE(name);
    CAPTURE(k);
    CAPTURE(nd);
    const bool yolo26 = name.rfind("yolo26", 0) == 0;
    const int reg_max = yolo26 ? 1 : 16;
    test::TempDir dir;
    torch::manual_seed(30 + k + nd + (yolo26 ? 1 : 0));
    auto kpts = torch::rand({4, k, 3});
    {
      // x, y within each box; visibility drawn from {0, 1, 2}.
      const auto c = labels.narrow(1, 2, 2).unsqueeze(1), wh = labels.narrow(1, 4, 2).unsqueeze(1);
      kpts.narrow(-1, 0, 2).copy_(c + (kpts.narrow(-1, 0, 2) - 0.5) * wh);
      kpts.select(-1, 2).copy_(torch::randint(0, 3, {4, k}).to(torch::kFloat));
    }
    if (nd == 2) kpts = kpts.narrow(-1, 0, 2).contiguous();  // the loss appends visibility 1
    Named saved = {{"labels", labels}, {"keypoints", kpts}, {"kpt_shape", torch::tensor({k, nd})}};
    if (!sigmas.empty()) saved.emplace_back("sigmas", torch::tensor(sigmas).to(torch::kFloat));
    model::DetectOutput out;
    const auto make = [&](const std::string& branch, std::vector<at::Tensor>& box,
                          std::vector<at::Tensor>& cls, std::vector<at::Tensor>& kp,
                          std::vector<at::Tensor>& sigma) {
      for (int l = 0; l < 3; ++l) {
        const int64_t side = 8 >> l;
        const auto bx = reg_max == 1 ? torch::rand({b, 4, side, side}) * 2.5 + 0.3
                                     : torch::randn({b, 4 * reg_max, side, side});
        box.push_back(bx.requires_grad_());
        cls.push_back((torch::randn({b, nc, side, side}) - 1).requires_grad_());
        kp.push_back((torch::randn({b, k * nd, side, side}) * 0.7).requires_grad_());
        saved.emplace_back(branch + "_box_" + std::to_string(l), box.back());
        saved.emplace_back(branch + "_cls_" + std::to_string(l), cls.back());
        saved.emplace_back(branch + "_kpts_" + std::to_string(l), kp.back());
        if (yolo26) {
          sigma.push_back(torch::randn({b, 2 * k, side, side}).requires_grad_());
          saved.emplace_back(branch + "_sigma_" + std::to_string(l), sigma.back());
        }
      }
    };
    std::vector<at::Tensor> o2m_box, o2m_cls, o2o_box, o2o_cls;
    make("o2m", o2m_box, o2m_cls, out.one2many_kpts, out.one2many_sigma);
    if (yolo26) make("o2o", o2o_box, o2o_cls, out.one2one_kpts, out.one2one_sigma);
    for (size_t l = 0; l < o2m_box.size(); ++l)
      out.one2many.push_back(torch::cat({o2m_box[l], o2m_cls[l]}, 1));
    for (size_t l = 0; l < o2o_box.size(); ++l)
      out.one2one.push_back(torch::cat({o2o_box[l], o2o_cls[l]}, 1));
    std::optional<loss::KeypointFlow> flow;
    model::RealNvp nvp{nullptr};
    if (yolo26) {
      nvp = seeded_flow(saved);
      flow = loss::keypoint_flow(nvp);
    }
    test::save_tensors(dir / "inputs.pt", saved);

    loss::PoseLoss criterion(nc, reg_max, strides, loss::LossGains{}, loss::PoseGains{},
                             /*end2end=*/yolo26, k, nd, sigmas, flow);
    const auto result = criterion(out, loss::LossTargets{labels, kpts, {}, {}, true}, b);
    test::run_oracle(*python, "pose_loss '" + (dir / "ref.pt").string() + "' " + name + " " +
                                  std::to_string(nc) + " '" + (dir / "inputs.pt").string() + "'");
    const auto ref = test::load_tensors(dir / "ref.pt");
    MESSAGE(name << " total " << result.total.item<double>() << " / "
                 << ref.at("total").item<double>() << "\n items " << result.items << "\n ref   "
                 << ref.at("items"));
    CHECK(result.total.item<double>() ==
          doctest::Approx(ref.at("total").item<double>()).epsilon(1e-5));
    // Relative above 1 (an RLE item can reach thousands when residuals hit the clamp).
    const auto ref_items = ref.at("items").to(torch::kDouble);
    const double d = ((result.items.to(torch::kDouble) - ref_items).abs() / (ref_items.abs() + 1))
                         .max()
                         .item<double>();
    MESSAGE(name << " items max |diff| / (|ref| + 1) " << d);
    CHECK(d < 1e-5);
    // Gradients of the total with respect to every raw output and flow parameter.
    result.total.backward();
    std::map<std::string, at::Tensor> grads;
    for (const auto& [key, tensor] : saved)
      if (key.rfind("o2", 0) == 0) grads[key] = tensor.grad();
    if (yolo26)
      for (const auto& item : nvp->named_parameters())
        grads["flow." + item.key()] = item.value().grad();
    double worst = 0;
    for (const auto& [key, grad] : grads) {
      CAPTURE(key);
      const auto& expect = ref.at("grad." + key);
      REQUIRE(grad.defined());
      const double scale = expect.abs().max().item<double>() + 1e-3;
      worst = std::max(worst, test::max_abs(grad, expect) / scale);
    }
    MESSAGE(name << " " << grads.size() << " gradients, max |diff| / max |ref| " << worst);
    CHECK(worst < 1e-4);
    std::string expected = "{\"names\": [";
    for (const auto& n : criterion.item_names())
      expected += (expected.back() == '[' ? "\"" : ", \"") + n + "\"";
    CHECK(test::read_text(dir / "ref.pt.json") == expected + "]}");
  }
}
