// The DOTA Task1 files of OBB predictions: tile stems, one line per detection in the split files,
// and tiles merged into their image with the class-aware ProbIoU Fast-NMS at 0.3.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "engine/task/obb_dota_output.h"
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

TEST_CASE("dota: class names become safe, unique file names") {
  // "a/b" has a '/', so it yields its "a_b" to the class named so; a class without a name is
  // its number; two classes of one name are told apart.
  CHECK(engine::dota_class_files({"a/b", "a_b", "small vehicle", "x:y*?", "car", "car"}, 8) ==
        std::vector<std::string>{"Task1_a_b_2.txt", "Task1_a_b.txt", "Task1_small-vehicle.txt",
                                 "Task1_x_y__.txt", "Task1_car.txt", "Task1_car_2.txt",
                                 "Task1_6.txt", "Task1_7.txt"});
  // Cut to 200 bytes at a character boundary: 199 'x' then a 2-byte 'é' keeps only the 'x's.
  const std::string long_name = std::string(199, 'x') + "\xc3\xa9" + "tail";
  CHECK(engine::dota_class_files({long_name}, 0) ==
        std::vector<std::string>{"Task1_" + std::string(199, 'x') + ".txt"});
}

TEST_CASE("dota: a class named with a '/' is written, atomically, beside one it meets") {
  test::TempDir dir;
  const std::filesystem::path split = dir / "predictions_txt";
  std::filesystem::create_directories(split);
  test::write_text(split / "Task1_old.txt", "an earlier run's class");
  std::vector<engine::DotaDetection> d = {
      {"img1", 0, 0.5, {50, 60, 40, 20, 0}},
      {"img1", 1, 0.25, {150, 60, 40, 20, 0}},
  };
  engine::write_dota_predictions(d, {"a/b", "a_b"}, dir.path());
  CHECK(read(split / "Task1_a_b_2.txt") == "img1 0.5 70.0 70.0 70.0 50.0 30.0 50.0 30.0 70.0\n");
  CHECK(read(split / "Task1_a_b.txt") == "img1 0.25 170.0 70.0 170.0 50.0 130.0 50.0 130.0 70.0\n");
  CHECK(read(dir / "predictions_merged_txt" / "Task1_a_b.txt") ==
        "img1 0.25 170.0 70.0 170.0 50.0 130.0 50.0 130.0 70.0\n");
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(split)) {
    ++files;
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  }
  CHECK(files == 2);  // Task1_old.txt is gone
}
