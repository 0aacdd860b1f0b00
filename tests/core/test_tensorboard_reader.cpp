// TensorBoard's own EventAccumulator reads back an event file written here: every scalar's tag,
// step and float32 value, and an image's size. Skips without a python that has tensorboard
// (scripts/setup.sh installs it), fails under CI=true.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/tensorboard/event_file.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace trainer;
using namespace trainer::core::tensorboard;

namespace {

std::string python_with_tensorboard() {
  const std::string python = test::project_python();
  std::string out;
  if (test::run_command("'" + python + "' -c 'import tensorboard'", &out) != 0) return "";
  return python;
}

uint32_t float_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace

TEST_CASE("TensorBoard's EventAccumulator reads back every scalar and the image") {
  const std::string python = python_with_tensorboard();
  if (python.empty()) {
    TRAINER_SKIP("no python with tensorboard (run scripts/setup.sh, or set TRAINER_PYTHON)");
  }
  test::TempDir dir;
  // (tag, step) -> the float32 written; tags as results.csv names them.
  std::map<std::pair<std::string, int64_t>, float> written;
  std::string file_name;
  {
    EventFileWriter writer(dir.path());
    file_name = writer.path().filename().string();
    const std::vector<std::string> tags = {"train/box_loss", "metrics/mAP50-95(B)", "lr/pg0",
                                           "time/epoch"};
    for (int64_t step = 1; step <= 3; ++step) {
      std::vector<ScalarValue> scalars;
      for (size_t t = 0; t < tags.size(); ++t) {
        const float v = static_cast<float>(1.0 / (3.0 + static_cast<double>(step * 7 + t)));
        scalars.push_back({tags[t], v});
        written[{tags[t], step}] = v;
      }
      writer.write(step, scalars);
    }
    writer.write(4, {{"tiny", 1e-30f}, {"huge", 3e38f}, {"negative", -2.5f}});
    written[{"tiny", 4}] = 1e-30f;
    written[{"huge", 4}] = 3e38f;
    written[{"negative", 4}] = -2.5f;
    writer.write(3, {}, {{"images/results", 2, 3, 3, std::string(50, 'x')}});
  }
  CHECK(file_name.rfind("events.out.tfevents.", 0) == 0);

  std::string out;
  const std::string command =
      "'" + python + "' '" TRAINER_TENSORBOARD_SCRIPT "' '" + dir.path().string() + "'";
  REQUIRE_MESSAGE(test::run_command(command, &out) == 0, out);
  std::map<std::pair<std::string, int64_t>, float> read;
  int images = 0;
  std::istringstream lines(out);
  std::string kind;
  while (lines >> kind) {
    if (kind == "scalar") {
      int64_t step = 0;
      std::string hex, tag;
      lines >> step >> hex >> tag;
      const auto bits = static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
      float value = 0;
      std::memcpy(&value, &bits, sizeof value);
      read[{tag, step}] = value;
    } else if (kind == "image") {
      int64_t step = 0;
      int height = 0, width = 0;
      size_t size = 0;
      std::string tag;
      lines >> step >> height >> width >> size >> tag;
      CHECK(tag == "images/results");
      CHECK(step == 3);
      CHECK(height == 2);
      CHECK(width == 3);
      CHECK(size == 50);
      ++images;
    } else {
      FAIL("unexpected reader output: " << out);
    }
  }
  CHECK(images == 1);
  REQUIRE(read.size() == written.size());
  for (const auto& [key, value] : written) {
    CAPTURE(key.first);
    CAPTURE(key.second);
    REQUIRE(read.count(key) == 1);
    CHECK(float_bits(read.at(key)) == float_bits(value));  // float32 exactly
  }
}
