// scripts/get_coco.sh in its offline mode on a fake COCO tree: YOLO labels by hand-computed
// values, and the subset = the N smallest val2017 image ids with its own json and labels.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "test_support.h"

using trainer::test::read_text;
using trainer::test::run_command;
using trainer::test::TempDir;
using trainer::test::write_text;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kScript = std::string(TRAINER_SOURCE_DIR) + "/scripts/get_coco.sh";

std::string jpg(int id) {
  std::string s = std::to_string(id);
  return std::string(12 - s.size(), '0') + s + ".jpg";
}

// Four val2017 images listed out of order (ids 5, 1, 3, 2); categories 1, 3, 90 -> classes 0, 1, 2.
void make_fake_coco(const fs::path& root) {
  Json coco;
  coco["info"] = {{"description", "fake"}};
  coco["licenses"] = Json::array();
  coco["categories"] = {{{"id", 90}, {"name", "toothbrush"}},
                        {{"id", 1}, {"name", "person"}},
                        {{"id", 3}, {"name", "car"}}};
  coco["images"] = Json::array();
  for (int id : {5, 1, 3, 2}) {
    coco["images"].push_back({{"id", id}, {"file_name", jpg(id)}, {"width", 100}, {"height", 200}});
    write_text(root / "images" / "val2017" / jpg(id), "jpeg " + std::to_string(id));
  }
  coco["annotations"] = {
      {{"id", 10}, {"image_id", 1}, {"category_id", 3}, {"bbox", {10, 20, 30, 40}}, {"iscrowd", 0}},
      {{"id", 11}, {"image_id", 1}, {"category_id", 1}, {"bbox", {0, 0, 50, 50}}, {"iscrowd", 1}},
      {{"id", 12},
       {"image_id", 2},
       {"category_id", 90},
       {"bbox", {0, 0, 100, 200}},
       {"iscrowd", 0}},
      {{"id", 13},
       {"image_id", 5},
       {"category_id", 1},
       {"bbox", {50, 100, 10, 20}},
       {"iscrowd", 0}}};
  write_text(root / "annotations" / "instances_val2017.json", coco.dump());
}

}  // namespace

TEST_CASE("get_coco.sh parses, and its dry run names the official archives without writing") {
  std::string out;
  CHECK(run_command("bash -n " + kScript, &out) == 0);
  TempDir dir;
  REQUIRE(run_command("bash " + kScript + " --dry-run --root " + (dir / "coco").string(), &out) ==
          0);
  CHECK(out.find("http://images.cocodataset.org/zips/val2017.zip") != std::string::npos);
  CHECK(out.find("http://images.cocodataset.org/zips/train2017.zip") != std::string::npos);
  CHECK(out.find("annotations_trainval2017.zip (252907541 bytes, md5 "
                 "f4bbac642086de4f52a3fdda2de5fa2c)") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "coco"));
  CHECK(run_command("bash " + kScript + " --bogus", &out) == 2);
}

TEST_CASE("get_coco.sh --subset-only makes labels and the smallest-id subset of a fake tree") {
  TempDir dir;
  const fs::path root = dir / "coco";
  make_fake_coco(root);
  std::string out;
  REQUIRE(run_command("bash " + kScript + " --subset-only --count 3 --root " + root.string(),
                      &out) == 0);
  const fs::path subset = root / "val2017_256";
  // Images: ids 1, 2, 3 (the three smallest), not 5.
  CHECK(read_text(subset / "images" / "val2017" / jpg(1)) == "jpeg 1");
  CHECK(fs::exists(subset / "images" / "val2017" / jpg(3)));
  CHECK_FALSE(fs::exists(subset / "images" / "val2017" / jpg(5)));
  const Json j = Json::parse(read_text(subset / "annotations" / "instances_val2017.json"));
  REQUIRE(j["images"].size() == 3);
  CHECK(j["images"][0]["id"] == 1);
  CHECK(j["images"][2]["id"] == 3);
  CHECK(j["annotations"].size() == 3);  // ids 10, 11 (crowd kept in the json), 12
  CHECK(j["categories"].size() == 3);
  // Image 1 (100 x 200), car (id 3 -> class 1), bbox [10, 20, 30, 40]:
  // cx = (10 + 15) / 100 = 0.25, cy = (20 + 20) / 200 = 0.2, w = 30 / 100 = 0.3, h = 40 / 200 =
  // 0.2. The crowd box is left out of the YOLO labels.
  CHECK(read_text(subset / "labels" / "val2017" / "000000000001.txt") ==
        "1 0.250000 0.200000 0.300000 0.200000\n");
  // Image 2: toothbrush (id 90 -> class 2), the whole image.
  CHECK(read_text(subset / "labels" / "val2017" / "000000000002.txt") ==
        "2 0.500000 0.500000 1.000000 1.000000\n");
  CHECK_FALSE(fs::exists(subset / "labels" / "val2017" / "000000000003.txt"));  // background
  // The full split's labels too: image 5, person (class 0), [50, 100, 10, 20] -> 0.55 0.55 0.1 0.1.
  CHECK(read_text(root / "labels" / "val2017" / "000000000005.txt") ==
        "0 0.550000 0.550000 0.100000 0.100000\n");
  CHECK(read_text(subset / "SOURCE.md").find("first id 1, last id 3") != std::string::npos);

  CHECK(run_command("bash " + kScript + " --subset-only --count 10 --root " + root.string(),
                    &out) != 0);
  CHECK(out.find("val2017 has only 4 images, the subset needs 10") != std::string::npos);
}
