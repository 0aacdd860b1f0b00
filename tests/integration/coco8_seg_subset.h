// coco8's 4 train images with their annotations (polygons, crowd regions) from coco128's
// instances json, as a dataset the tests train on: the segmentation golden and learning tests.
//
// Why generated: coco8's own labels are boxes only; coco128's json has real polygons for the same
// images, and the shared data is read where it lies, never copied into the project.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace trainer::test {

// Writes DIR/coco8_seg.json (the 4 images' entries of coco128's json) and DIR/coco8_seg.yaml (root
// = coco128, both splits = those images); returns the yaml.
inline std::filesystem::path write_coco8_seg_subset(const std::filesystem::path& coco128,
                                                    const std::filesystem::path& dir) {
  std::ifstream in(coco128 / "annotations" / "instances_train2017.json");
  const auto full = nlohmann::json::parse(in);
  const std::set<std::string> keep = {"000000000009.jpg", "000000000025.jpg", "000000000030.jpg",
                                      "000000000034.jpg"};
  nlohmann::json out = {{"images", nlohmann::json::array()},
                        {"annotations", nlohmann::json::array()},
                        {"categories", full["categories"]}};
  std::set<int64_t> ids;
  for (const auto& image : full["images"]) {
    if (keep.count(image["file_name"].get<std::string>())) {
      out["images"].push_back(image);
      ids.insert(image["id"].get<int64_t>());
    }
  }
  for (const auto& a : full["annotations"]) {
    if (ids.count(a["image_id"].get<int64_t>())) out["annotations"].push_back(a);
  }
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "coco8_seg.json") << out.dump();
  std::ofstream yaml(dir / "coco8_seg.yaml");
  yaml << "path: " << coco128.string() << "\ntrain: images/train2017\nval: images/train2017\n"
       << "train_json: " << (dir / "coco8_seg.json").string() << "\n"
       << "val_json: " << (dir / "coco8_seg.json").string() << "\nnames:\n";
  for (size_t c = 0; c < full["categories"].size(); ++c) {
    yaml << "  " << c << ": " << full["categories"][c]["name"].get<std::string>() << "\n";
  }
  return dir / "coco8_seg.yaml";
}

}  // namespace trainer::test
