// NMS timing, the batched decode against the per-step loop it replaced (prints JSON; not a test):
//   bench_nms [BATCH] [ANCHORS] [NC] [REPEATS] [cpu|cuda] [CONF]
// Random head outputs: with conf 0.001 every (anchor, class) pair is a candidate, so each image
// reaches max_nms = 30000 candidates, an untrained model's validation (the worst case).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "loop_nms.h"
#include "model/postprocess.h"

using namespace trainer::model;

namespace {

template <typename F>
double median_ms(int repeats, const torch::Device& device, F&& f) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = f();
    if (device.is_cuda() && !out.empty()) (void)out.back().sum().template item<float>();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::stoll(argv[1]) : 4;
  const int64_t anchors = argc > 2 ? std::stoll(argv[2]) : 8400;
  const int64_t nc = argc > 3 ? std::stoll(argv[3]) : 80;
  const int repeats = argc > 4 ? std::stoi(argv[4]) : 3;
  const torch::Device device(argc > 5 ? argv[5] : "cpu");
  PredictOptions options;
  options.conf = argc > 6 ? std::stod(argv[6]) : 0.001;
  torch::manual_seed(0);
  auto xy = torch::rand({batch, 2, anchors}) * 600;
  auto wh = torch::rand({batch, 2, anchors}) * 120 + 4;
  auto scores = torch::rand({batch, nc, anchors}).pow(4);
  const auto preds = torch::cat({xy, xy + wh, scores}, 1).to(device);
  const double loop =
      median_ms(repeats, device, [&] { return loop_non_max_suppression(preds, options); });
  const double fast =
      median_ms(repeats, device, [&] { return non_max_suppression(preds, options); });
  const auto a = loop_non_max_suppression(preds, options);
  const auto b = non_max_suppression(preds, options);
  // Past max_nms the loop's topk leaves equal scores in no defined order, so rows may then differ
  // among ties; the scores kept must not.
  bool equal = a.size() == b.size(), equal_scores = equal;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    equal = equal && torch::equal(a[i].cpu(), b[i].cpu());
    equal_scores = equal_scores && a[i].size(0) == b[i].size(0) &&
                   torch::equal(a[i].select(1, 4).cpu(), b[i].select(1, 4).cpu());
  }
  std::printf(
      "{\"benchmark\": \"nms\", \"device\": \"%s\", \"batch\": %lld, \"anchors\": %lld, \"nc\": "
      "%lld, \"conf\": %g, \"repeats\": %d, \"loop_median_ms\": %.2f, \"batched_median_ms\": %.2f, "
      "\"speedup\": %.2f, \"identical\": %s, \"identical_scores\": %s, \"kept_image0\": %lld}\n",
      device.str().c_str(), static_cast<long long>(batch), static_cast<long long>(anchors),
      static_cast<long long>(nc), options.conf, repeats, loop, fast, loop / fast,
      equal ? "true" : "false", equal_scores ? "true" : "false",
      static_cast<long long>(b[0].size(0)));
  return 0;
}
