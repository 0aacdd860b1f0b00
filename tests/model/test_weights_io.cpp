// Weights files: export -> import round trip equal to the bit, the errors for files that do not
// fit (each missing, unexpected and mismatched key named), and the Python side
// (scripts/convert_weights.py, torch.save / torch.load) when the project's venv is present.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>

#include "core/error.h"
#include "model/weights_io.h"
#include "model/yolo_model.h"
#include "test_support.h"

using namespace trainer::model;
namespace fs = std::filesystem;

namespace {

// Every parameter and buffer equal to the bit (torch::equal compares values and shapes).
void check_identical(const torch::nn::Module& a, const torch::nn::Module& b) {
  const auto sa = state_dict(a);
  const auto sb = state_dict(b);
  REQUIRE(sa.size() == sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    CAPTURE(sa[i].first);
    REQUIRE(sa[i].first == sb[i].first);
    CHECK((sa[i].second.scalar_type() == sb[i].second.scalar_type()));
    CHECK(torch::equal(sa[i].second, sb[i].second));
  }
}

// A model whose BN statistics and counters moved away from their initial values.
YoloModel trained_tiny(ModelFamily family, int nc, uint64_t seed) {
  torch::manual_seed(seed);
  auto model = build_tiny_yolo_model(family, nc);
  torch::NoGradGuard no_grad;
  model->forward_for_loss(torch::rand({2, 3, 64, 64}));
  model->forward_for_loss(torch::rand({2, 3, 64, 64}));
  return model;
}

std::string python() {
  const std::string venv = trainer::test::project_python();
  return fs::exists(venv) ? venv : "";
}

}  // namespace

TEST_CASE("export then import is equal to the bit, BN statistics and counters included") {
  trainer::test::TempDir dir;
  auto a = trained_tiny(ModelFamily::kYolo26, 4, 1);
  auto counter = a->named_buffers()["model.0.bn.num_batches_tracked"];
  CHECK(counter.item<int64_t>() == 2);
  save_weights(*a, dir / "w.pt");
  auto b = trained_tiny(ModelFamily::kYolo26, 4, 2);  // different weights before the load
  CHECK_FALSE(torch::equal(a->named_parameters()["model.0.conv.weight"],
                           b->named_parameters()["model.0.conv.weight"]));
  load_weights(*b, dir / "w.pt");
  check_identical(*a, *b);
  // The file lists exactly the state-dict keys.
  CHECK(read_weights_file(dir / "w.pt").size() == state_dict(*a).size());
}

TEST_CASE("importing a file of another family names every missing, unexpected and mismatched key") {
  trainer::test::TempDir dir;
  auto y11 = build_tiny_yolo_model(ModelFamily::kYolo11, 4);
  save_weights(*y11, dir / "y11.pt");
  auto y26 = build_tiny_yolo_model(ModelFamily::kYolo26, 4);
  const auto before = y26->named_parameters()["model.0.conv.weight"].clone();
  std::string message;
  std::ostringstream debug_log;  // every problem is logged at debug level (-v)
  {
    const auto previous = spdlog::default_logger();
    auto logger = std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(debug_log));
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
    try {
      load_weights(*y26, dir / "y11.pt");
    } catch (const trainer::core::InputError& e) {
      message = e.what();
    }
    spdlog::set_default_logger(previous);
  }
  CAPTURE(message);
  CHECK(message.find("weights file " + (dir / "y11.pt").string() + " does not fit the model") == 0);
  // The message shows the first 5 problems and counts the rest; the log has them all.
  CHECK(trainer::test::count_of(message, "\n  ") == 6);
  CHECK(message.find(" more (-v lists them)") != std::string::npos);
  const std::string all = debug_log.str();
  // YOLO26 has the one2one copy, YOLO11 has the DFL, and the box output has 4 vs 64 channels.
  CHECK(all.find("missing key 'model.23.one2one_cv2.0.2.weight' (4, 16, 1, 1)") !=
        std::string::npos);
  CHECK(all.find("unexpected key 'model.23.dfl.conv.weight' (1, 16, 1, 1)") != std::string::npos);
  CHECK(all.find("shape mismatch for 'model.23.cv2.0.2.weight': file (64, 64, 1, 1), model "
                 "(4, 16, 1, 1)") != std::string::npos);
  // Nothing was copied: the load checks everything first.
  CHECK(torch::equal(before, y26->named_parameters()["model.0.conv.weight"]));
}

TEST_CASE("a class-count mismatch is reported on the class output conv") {
  trainer::test::TempDir dir;
  save_weights(*build_tiny_yolo_model(ModelFamily::kYolo26, 80), dir / "nc80.pt");
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 80);
  auto before = model->named_parameters()["model.0.conv.weight"].clone();
  auto weights = read_weights_file(dir / "nc80.pt");
  for (auto& [key, t] : weights) {
    if (key == "model.23.cv3.0.2.bias") t = torch::zeros({3});
  }
  CHECK_THROWS_WITH_AS(load_weights(*model, weights, "test weights"),
                       "test weights does not fit the model (1 problem):\n  shape mismatch for "
                       "'model.23.cv3.0.2.bias': file (3,), model (80,)",
                       trainer::core::InputError);
  CHECK(torch::equal(before, model->named_parameters()["model.0.conv.weight"]));
}

TEST_CASE("fp16 weights (as reference checkpoints store them) load into fp32 parameters") {
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  NamedTensorList half;
  for (const auto& [k, t] : state_dict(*model)) {
    half.emplace_back(k, t.is_floating_point() ? (t * 0.5).to(torch::kHalf) : t.clone());
  }
  auto target = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  load_weights(*target, half);
  auto w = target->named_parameters()["model.0.conv.weight"];
  CHECK((w.scalar_type() == torch::kFloat));
  CHECK(torch::allclose(w, model->named_parameters()["model.0.conv.weight"] * 0.5, 1e-3, 1e-3));
  // An integer counter given as float is refused.
  for (auto& [k, t] : half) {
    if (k == "model.0.bn.num_batches_tracked") t = t.to(torch::kFloat);
  }
  CHECK_THROWS_WITH_AS(load_weights(*target, half, "w"),
                       "w does not fit the model (1 problem):\n  dtype mismatch for "
                       "'model.0.bn.num_batches_tracked': file Float, model Long",
                       trainer::core::InputError);
}

TEST_CASE("bad weights files: missing, not a torch.save file, not a dict") {
  trainer::test::TempDir dir;
  auto model = build_tiny_yolo_model(ModelFamily::kYolo26, 2);
  CHECK_THROWS_WITH_AS(load_weights(*model, dir / "nope.pt"),
                       ("weights file not found: " + (dir / "nope.pt").string()).c_str(),
                       trainer::core::InputError);
  trainer::test::write_text(dir / "text.pt", "hello, not a checkpoint\n");
  try {
    load_weights(*model, dir / "text.pt");
    FAIL("expected an InputError");
  } catch (const trainer::core::InputError& e) {
    CHECK(std::string(e.what()).find("weights file " + (dir / "text.pt").string() +
                                     " is not a torch.save file of a dict of tensors") == 0);
  }
  const auto list = torch::pickle_save(c10::IValue(std::vector<int64_t>{1, 2, 3}));
  trainer::test::write_text(dir / "list.pt", std::string(list.begin(), list.end()));
  try {
    load_weights(*model, dir / "list.pt");
    FAIL("expected an InputError");
  } catch (const trainer::core::InputError& e) {
    CHECK(std::string(e.what()).find("expected a dict {name: tensor}") != std::string::npos);
  }
}

TEST_CASE(
    "Python round trip: reference-style checkpoint -> convert_weights.py -> import -> back "
    "(slow)") {
  const std::string py = python();
  if (py.empty()) TRAINER_SKIP("~/.cache/trainer/venv/bin/python not found (run scripts/setup.sh)");
  trainer::test::TempDir dir;
  const std::string script = std::string(TRAINER_SOURCE_DIR) + "/scripts/convert_weights.py";
  auto original = trained_tiny(ModelFamily::kYolo26, 3, 5);
  save_weights(*original, dir / "ours.pt");
  // A stand-in for a reference checkpoint: {'model': nn.Module whose state_dict() has our keys,
  // 'ema': None}, saved with torch.save (ultralytics is not installed here).
  trainer::test::write_text(dir / "make_ckpt.py", R"(import sys, torch
sd = torch.load(sys.argv[1], weights_only=True)
root = torch.nn.Module()
for key, value in sd.items():
    *path, leaf = key.split('.')
    m = root
    for part in path:
        if not hasattr(m, part):
            m.add_module(part, torch.nn.Module())
        m = getattr(m, part)
    if value.is_floating_point() and not key.endswith(('running_mean', 'running_var')):
        m.register_parameter(leaf, torch.nn.Parameter(value))
    else:
        m.register_buffer(leaf, value)
assert list(root.state_dict().keys()) == list(sd.keys())
torch.save({'model': root, 'ema': None, 'epoch': -1}, sys.argv[2])
)");
  std::string out;
  const auto run = [&](const std::string& args) {
    const int rc = trainer::test::run_command(py + " " + args, &out);
    CAPTURE(out);
    REQUIRE(rc == 0);
  };
  run((dir / "make_ckpt.py").string() + " " + (dir / "ours.pt").string() + " " +
      (dir / "ref.pt").string());
  // Read natively (the pickled torch.nn.Module tree is a reference-style checkpoint) ...
  auto direct = build_tiny_yolo_model(ModelFamily::kYolo26, 3);
  load_weights(*direct, dir / "ref.pt");
  check_identical(*original, *direct);
  // ... and through the script, as before.
  run(script + " import " + (dir / "ref.pt").string() + " " + (dir / "imported.pt").string());
  auto imported = build_tiny_yolo_model(ModelFamily::kYolo26, 3);
  load_weights(*imported, dir / "imported.pt");
  check_identical(*original, *imported);
  // Back to a reference state dict (fp32) and in again.
  run(script + " export " + (dir / "imported.pt").string() + " " +
      (dir / "state_dict.pt").string());
  auto again = build_tiny_yolo_model(ModelFamily::kYolo26, 3);
  load_weights(*again, dir / "state_dict.pt");
  check_identical(*original, *again);
  // A raw state_dict() saved from Python is an OrderedDict (which LibTorch's own reader refused):
  // it reads like a dict.
  trainer::test::write_text(dir / "od.py",
                            "import sys, torch, collections\n"
                            "sd = torch.load(sys.argv[1], weights_only=True)\n"
                            "torch.save(collections.OrderedDict(sd), sys.argv[2])\n");
  run((dir / "od.py").string() + " " + (dir / "imported.pt").string() + " " +
      (dir / "od.pt").string());
  auto from_ordered = build_tiny_yolo_model(ModelFamily::kYolo26, 3);
  load_weights(*from_ordered, dir / "od.pt");
  check_identical(*original, *from_ordered);
}
