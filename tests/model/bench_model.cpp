// Forward+backward timing of a model on this machine: `bench_model [NAME] [BATCH] [ITERS]
// [bf16]`, one JSON line per image size (320, 640). Not a test: timings are printed, never
// asserted. The backward pass uses a stand-in loss (the mean of every head output), so this times
// the model, not lib/loss.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "model/yolo_model.h"

using namespace trainer::model;

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "yolo26n";
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 4;
  const int iters = argc > 3 ? std::stoi(argv[3]) : 3;
  const bool bf16 = argc > 4 && std::string(argv[4]) == "bf16";
  torch::manual_seed(0);
  auto model = build_yolo_model(parse_model_name(name), 80);
  model->train();
  for (const int64_t imgsz : {320, 640}) {
    auto images = torch::rand({batch, 3, imgsz, imgsz});
    double best = 1e30, total = 0;
    for (int it = 0; it < iters + 1; ++it) {  // one warm-up
      model->zero_grad();
      const auto t0 = std::chrono::steady_clock::now();
      torch::Tensor loss;
      {
        const bool was = at::autocast::is_autocast_enabled(at::kCPU);
        if (bf16) {
          at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
          at::autocast::set_autocast_enabled(at::kCPU, true);
          at::autocast::increment_nesting();
        }
        auto out = model->forward_for_loss(images);
        loss = torch::zeros({});
        for (const auto& l : out.one2many) loss = loss + l.to(torch::kFloat).mean();
        for (const auto& l : out.one2one) loss = loss + l.to(torch::kFloat).mean();
        if (bf16) {
          if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
          at::autocast::set_autocast_enabled(at::kCPU, was);
        }
      }
      loss.backward();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (it > 0) {
        best = std::min(best, s);
        total += s;
      }
    }
    std::printf(
        "{\"model\": \"%s\", \"imgsz\": %ld, \"batch\": %ld, \"precision\": \"%s\", "
        "\"threads\": %d, \"iters\": %d, \"fwd_bwd_s_mean\": %.3f, \"fwd_bwd_s_min\": %.3f}\n",
        name.c_str(), static_cast<long>(imgsz), static_cast<long>(batch), bf16 ? "bf16" : "fp32",
        torch::get_num_threads(), iters, total / iters, best);
    std::fflush(stdout);
  }
  return 0;
}
