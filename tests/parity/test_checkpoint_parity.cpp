// trainer's files open in plain PyTorch with its defaults: `torch.load(path)` (weights_only=True
// since torch 2.6) reads a training checkpoint and a weights file.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "engine/checkpoint/checkpoint.h"
#include "parity_oracle.h"
#include "test_support.h"

using namespace trainer;

TEST_CASE("parity: torch.load(path) with its defaults reads a trainer checkpoint") {
  TRAINER_REQUIRE_ORACLE(python);
  test::TempDir dir;
  engine::Checkpoint c;
  c.config_yaml = "model: yolo26n\n";
  c.epoch = 4;
  c.iteration = 10;
  c.optimizer_name = "MuSGD";
  c.model = {{"model.0.conv.weight", torch::ones({2, 3})}};
  c.ema = {{"ema.model.0.conv.weight", torch::ones({2, 3})}, {"ema.updates", torch::tensor(7)}};
  c.optimizer = {{"g0.p0.momentum", torch::zeros({2, 3})}};
  c.rng_cpu = torch::zeros({8}, torch::kUInt8);
  c.date = "2026-11-30T10:00:00";
  engine::save_checkpoint(c, dir / "last.ckpt");
  const std::string out =
      test::run_oracle(*python, "checkpoint '" + (dir / "last.ckpt").string() + "'");
  CHECK(out.find("\"epoch\": 4") != std::string::npos);
  CHECK(out.find("\"model\"") != std::string::npos);
  CHECK(out.find("\"optimizer\"") != std::string::npos);
  // And the round trip in C++ still holds.
  const auto back = engine::load_checkpoint(dir / "last.ckpt");
  CHECK(back.epoch == 4);
  CHECK(torch::equal(back.ema.at("ema.model.0.conv.weight"), torch::ones({2, 3})));
}
