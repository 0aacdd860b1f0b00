// The DOTA Task1 files of OBB predictions: tile stems, one line per detection in the split files,
// and tiles merged into their image with the class-aware ProbIoU Fast-NMS at 0.3.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "engine/dota_output.h"
#include "test_support.h"

using namespace trainer;

namespace {

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("dota: tile stems give the image and the offset") {
  const auto t = engine::tile_origin("P0001__1024__824___512");
  CHECK(t.image == "P0001");
  CHECK(t.x == 824);
  CHECK(t.y == 512);
  const auto plain = engine::tile_origin("image_7");
  CHECK(plain.image == "image_7");
  CHECK(plain.x == 0);
}

TEST_CASE("dota: split lines per class, tiles merged into their image with Fast-NMS at 0.3") {
  test::TempDir dir;
  // The same 40 x 20 box seen by two tiles of P0001 (the second tile starts at x = 100), and a
  // box of another class in the same place; the lower-scored duplicate is merged away.
  std::vector<engine::DotaDetection> d = {
      {"P0001__1024__0___0", 0, 0.9, {150, 60, 40, 20, 0}},
      {"P0001__1024__100___0", 0, 0.6, {50, 60, 40, 20, 0}},
      {"P0001__1024__100___0", 1, 0.5, {50, 60, 40, 20, 0}},
  };
  engine::write_dota_predictions(d, {"small vehicle", "ship"}, dir.path());
  const std::string split = read(dir / "predictions_txt" / "Task1_small-vehicle.txt");
  CHECK(split ==
        "P0001__1024__0___0 0.9 170.0 70.0 170.0 50.0 130.0 50.0 130.0 70.0\n"
        "P0001__1024__100___0 0.6 70.0 70.0 70.0 50.0 30.0 50.0 30.0 70.0\n");
  const std::string merged = read(dir / "predictions_merged_txt" / "Task1_small-vehicle.txt");
  CHECK(merged == "P0001 0.9 170.0 70.0 170.0 50.0 130.0 50.0 130.0 70.0\n");
  // The other class keeps its box (the class offset keeps the classes apart).
  CHECK(read(dir / "predictions_merged_txt" / "Task1_ship.txt") ==
        "P0001 0.5 170.0 70.0 170.0 50.0 130.0 50.0 130.0 70.0\n");
}
