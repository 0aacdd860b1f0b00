// The synthetic datasets: one seed gives byte-identical files, every label parses under the
// dataset's own yaml, and the pose figures keep their left limbs on the image's right (so a flip
// with the generated flip_idx yields a valid figure) with every keypoint inside its box.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "data/dataset.h"
#include "data/dataset_yaml.h"
#include "demo/synthetic_dataset.h"
#include "demo/synthetic_obb_dataset.h"
#include "demo/synthetic_pose_dataset.h"
#include "geometry/rotated_box.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace trainer;

namespace {

std::string bytes_of_tree(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() != ".cache") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    all += fs::relative(f, root).string() + "\n" + s.str();
  }
  return all;
}

data::DatasetIndex load(const fs::path& yaml, data::Split split) {
  data::LoadOptions options;
  options.use_cache = false;
  options.log = false;
  return data::load_split(data::load_dataset_yaml(yaml), split, options);
}

demo::SyntheticOptions small() {
  demo::SyntheticOptions o;
  o.train_images = 6;
  o.val_images = 3;
  o.image_size = 128;
  o.max_objects = 3;
  o.min_object_size = 24;
  o.max_object_size = 96;
  o.seed = 7;
  return o;
}

}  // namespace

TEST_CASE("synthetic pose dataset: deterministic, valid labels, left limbs on the image's right") {
  test::TempDir a, b;
  const auto summary = demo::generate_synthetic_pose_dataset(a.path(), small());
  demo::generate_synthetic_pose_dataset(b.path(), small());
  CHECK(bytes_of_tree(a.path()) == bytes_of_tree(b.path()));
  CHECK(summary.images == 9);
  CHECK(summary.dataset_yaml == a / "pose.yaml");
  const auto spec = data::load_dataset_yaml(summary.dataset_yaml);
  REQUIRE(spec.kpt_shape.has_value());
  CHECK((*spec.kpt_shape)[0] == 7);
  CHECK(spec.flip_idx == std::vector<int>{0, 1, 3, 2, 4, 6, 5});
  int objects = 0;
  for (const auto split : {data::Split::kTrain, data::Split::kVal}) {
    const auto index = load(summary.dataset_yaml, split);
    CHECK(index.stats.corrupt == 0);
    for (const auto& item : index.items) {
      REQUIRE(item.keypoints.size() == item.boxes.size() * 7 * 3);
      for (size_t i = 0; i < item.boxes.size(); ++i, ++objects) {
        const auto& box = item.boxes[i];
        const float* p = item.keypoints.data() + i * 21;
        for (int k = 0; k < 7; ++k) {
          INFO(item.image.string() << " figure " << i << " point " << k);
          CHECK(std::abs(p[3 * k] - box[0]) <= box[2] / 2 + 1e-5f);
          CHECK(std::abs(p[3 * k + 1] - box[1]) <= box[3] / 2 + 1e-5f);
          CHECK((p[3 * k + 2] == 1.0f || p[3 * k + 2] == 2.0f));
        }
        CHECK(p[3 * 2] > p[3 * 1]);  // left hand right of the neck
        CHECK(p[3 * 3] < p[3 * 1]);  // right hand left of it
        CHECK(p[3 * 5] > p[3 * 4]);  // left foot right of the hip
        CHECK(p[3 * 6] < p[3 * 4]);
      }
    }
  }
  CHECK(objects == summary.objects);
}

TEST_CASE("synthetic shapes dataset: deterministic, and its json and txt labels agree") {
  test::TempDir a, b;
  const auto summary = demo::generate_synthetic_dataset(a.path(), small());
  demo::generate_synthetic_dataset(b.path(), small());
  CHECK(bytes_of_tree(a.path()) == bytes_of_tree(b.path()));
  const auto from_json = load(summary.dataset_yaml, data::Split::kTrain);
  data::DatasetSpec txt = data::load_dataset_yaml(summary.dataset_yaml);
  txt.train_json.reset();
  data::LoadOptions options;
  options.use_cache = false;
  options.log = false;
  const auto from_txt = data::load_split(txt, data::Split::kTrain, options);
  REQUIRE(from_json.size() == from_txt.size());
  for (size_t i = 0; i < from_json.size(); ++i) {
    REQUIRE(from_json.items[i].boxes.size() == from_txt.items[i].boxes.size());
    CHECK(from_json.items[i].classes == from_txt.items[i].classes);
    for (size_t j = 0; j < from_json.items[i].boxes.size(); ++j) {
      for (int c = 0; c < 4; ++c) {
        CHECK(from_json.items[i].boxes[j][c] ==
              doctest::Approx(from_txt.items[i].boxes[j][c]).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE(
    "synthetic OBB dataset: deterministic, DOTA rows of long rotated boxes inside the image") {
  test::TempDir a, b;
  const auto summary = demo::generate_synthetic_obb_dataset(a.path(), small());
  demo::generate_synthetic_obb_dataset(b.path(), small());
  CHECK(bytes_of_tree(a.path()) == bytes_of_tree(b.path()));
  CHECK(summary.images == 9);
  CHECK(summary.dataset_yaml == a / "obb.yaml");
  CHECK(data::load_dataset_yaml(summary.dataset_yaml).names ==
        std::vector<std::string>{"bar", "capsule", "arrow"});
  int objects = 0;
  double angle_spread = 0;
  std::vector<geometry::RotatedBox> all;
  for (const auto& entry : fs::recursive_directory_iterator(a / "labels")) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    std::vector<geometry::RotatedBox> in_image;
    for (std::string line; std::getline(in, line);) {
      std::istringstream row(line);
      int cls = -1;
      row >> cls;
      CHECK((cls >= 0 && cls <= 2));
      std::vector<geometry::Point> corners(4);
      for (auto& p : corners) row >> p.x >> p.y;
      CHECK(static_cast<bool>(row));
      std::string extra;
      const bool more = static_cast<bool>(row >> extra);
      CHECK_FALSE(more);  // exactly 9 values
      for (const auto& p : corners) {
        CHECK((p.x > 0 && p.x < 1 && p.y > 0 && p.y < 1));
      }
      // In pixels: a rectangle (the four corners are its own minimum-area box), long side between
      // the options' sizes, aspect ratio at least 1.6 (the 6 px floor on h aside).
      for (auto& p : corners) p = {p.x * 128, p.y * 128};
      const geometry::RotatedBox box = geometry::min_area_box(corners);
      CHECK(box.w ==
            doctest::Approx(std::hypot(corners[1].x - corners[2].x, corners[1].y - corners[2].y))
                .epsilon(1e-3));
      CHECK(box.w >= 24 - 0.01);
      CHECK(box.w <= 96 + 0.01);
      CHECK(box.w / box.h >= std::min(1.6, box.w / 6.0) - 0.01);
      for (const auto& other : in_image) CHECK(geometry::rotated_iou(box, other) <= 0.05 + 1e-6);
      in_image.push_back(box);
      all.push_back(box);
      ++objects;
    }
  }
  CHECK(objects == summary.objects);
  REQUIRE(all.size() >= 6);
  // Random orientations: the canonical angles are not all alike.
  for (const auto& box : all)
    angle_spread = std::max(angle_spread, std::abs(box.angle - all[0].angle));
  CHECK(angle_spread > 0.5);
}
