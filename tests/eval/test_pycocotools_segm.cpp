// Segmentation evaluation and COCO RLE against pycocotools itself, on coco128's real polygons and
// crowd RLEs: pycocotools_segm_reference.py writes pycocotools' RLE strings of every annotation
// (and of each polygon alone), of random polygons, masks, merges and IoU matrices, and mask result
// sets with COCOeval(iouType='segm')'s stats. Every string must be byte-identical, every area, box
// and IoU equal, and every stat within 1e-6 (the number bit-identical is printed).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/coco_json.h"
#include "eval/coco_eval.h"
#include "eval/coco_masks.h"
#include "eval/rle.h"
#include "pycocotools_compare.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace trainer;
using eval::Rle;

namespace {

std::array<double, 4> box_of(const nlohmann::json& j) {
  return {j[0].get<double>(), j[1].get<double>(), j[2].get<double>(), j[3].get<double>()};
}

// Runs the reference script once per process for the part a test case reads: "rle" (rle.json,
// under a second) or "sets" (the result sets and their stats, ~15 s).
struct SegmReference {
  std::string skip_reason;
  test::TempDir dir;
  fs::path gt_path;
  explicit SegmReference(const std::string& part) {
    const auto coco128 = test::shared_data("coco128");
    if (!coco128) {
      skip_reason = "../shared/data/coco128 not found (set TRAINER_SHARED_DATA)";
      return;
    }
    const std::string python = test::python_with_pycocotools();
    if (python.empty()) {
      skip_reason = "no python with pycocotools (run scripts/setup.sh, or set TRAINER_PYTHON)";
      return;
    }
    gt_path = *coco128 / "annotations/instances_train2017.json";
    std::string out;
    const int status = test::run_command(
        "'" + python + "' '" TRAINER_EVAL_SCRIPTS "/pycocotools_segm_reference.py' '" +
            gt_path.string() + "' '" + dir.path().string() + "' " + part,
        &out);
    if (status != 0) skip_reason = "pycocotools_segm_reference.py failed:\n" + out;
  }
};

const SegmReference& reference(const std::string& part = "rle") {
  static const SegmReference rle("rle");
  if (part == "rle") return rle;
  static const SegmReference sets("sets");
  return sets;
}

#define SKIP_WITHOUT_REFERENCE(part)                                     \
  if (!reference(part).skip_reason.empty()) {                            \
    if (reference(part).skip_reason.rfind("pycocotools_segm", 0) == 0) { \
      FAIL(reference(part).skip_reason);                                 \
    }                                                                    \
    TRAINER_SKIP(reference(part).skip_reason);                           \
  }

}  // namespace

TEST_CASE("segm RLE: annToRLE of coco128's polygons and crowd RLEs equals pycocotools' bytes") {
  SKIP_WITHOUT_REFERENCE("rle");
  const data::CocoFile gt = data::read_coco_json(reference().gt_path);
  const auto ref = nlohmann::json::parse(test::read_text(reference().dir / "rle.json"));
  std::unordered_map<int64_t, const data::CocoImage*> images;
  for (const auto& image : gt.images) images[image.id] = &image;
  std::unordered_map<int64_t, const nlohmann::json*> by_id;
  for (const auto& entry : ref.at("annotations")) by_id[entry.at("id").get<int64_t>()] = &entry;

  size_t same = 0, parts_same = 0, parts = 0, crowd = 0, multi = 0;
  REQUIRE(by_id.size() == gt.annotations.size());
  for (const auto& a : gt.annotations) {
    CAPTURE(a.id);
    const nlohmann::json& want = *by_id.at(a.id);
    const data::CocoImage& image = *images.at(a.image_id);
    const Rle mask = eval::coco_segmentation_rle(a.segmentation, image.height, image.width);
    const std::string counts = eval::rle_to_string(mask);
    CHECK(counts == want.at("rle").at("counts").get<std::string>());
    CHECK(mask.height == want.at("rle").at("size")[0].get<int>());
    CHECK(mask.width == want.at("rle").at("size")[1].get<int>());
    CHECK(eval::rle_area(mask) == want.at("area").get<uint64_t>());
    CHECK(eval::rle_to_bbox(mask) == box_of(want.at("bbox")));
    same += counts == want.at("rle").at("counts").get<std::string>();
    crowd += a.segmentation.rle.has_value();
    multi += a.segmentation.polygons.size() > 1;
    // Each polygon alone (rleFrPoly before the merge).
    if (want.contains("parts")) {
      const auto& want_parts = want.at("parts");
      REQUIRE(want_parts.size() == a.segmentation.polygons.size());
      for (size_t i = 0; i < want_parts.size(); ++i) {
        const std::string part = eval::rle_to_string(
            eval::rle_from_polygon(a.segmentation.polygons[i], image.height, image.width));
        CHECK(part == want_parts[i].get<std::string>());
        parts_same += part == want_parts[i].get<std::string>();
        ++parts;
      }
    }
  }
  CHECK(crowd > 0);  // the crowd RLEs (uncompressed counts) are exercised
  CHECK(multi > 0);  // and the merge of several polygons
  MESSAGE("annToRLE strings identical to pycocotools: "
          << same << "/" << gt.annotations.size() << " annotations (" << crowd << " crowd RLEs, "
          << multi << " multi-polygon), " << parts_same << "/" << parts << " single polygons");
}

TEST_CASE("segm RLE: random polygons, masks, merges and IoUs equal pycocotools'") {
  SKIP_WITHOUT_REFERENCE("rle");
  const auto ref = nlohmann::json::parse(test::read_text(reference().dir / "rle.json"));
  size_t polygons = 0;
  for (const auto& p : ref.at("polygons")) {
    CAPTURE(p.dump());
    const Rle r = eval::rle_from_polygon(p.at("xy").get<std::vector<double>>(),
                                         p.at("h").get<int>(), p.at("w").get<int>());
    CHECK(eval::rle_to_string(r) == p.at("counts").get<std::string>());
    CHECK(eval::rle_area(r) == p.at("area").get<uint64_t>());
    CHECK(eval::rle_to_bbox(r) == box_of(p.at("bbox")));
    polygons += eval::rle_to_string(r) == p.at("counts").get<std::string>();
  }
  size_t masks = 0;
  for (const auto& m : ref.at("masks")) {
    const int h = m.at("h").get<int>(), w = m.at("w").get<int>();
    const auto pixels = m.at("mask").get<std::vector<uint8_t>>();
    const Rle r = eval::rle_encode(pixels.data(), h, w);
    CHECK(eval::rle_to_string(r) == m.at("counts").get<std::string>());
    CHECK(eval::rle_decode(eval::rle_from_string(m.at("counts").get<std::string>(), h, w)) ==
          pixels);
    CHECK(eval::rle_area(r) == m.at("area").get<uint64_t>());
    CHECK(eval::rle_to_bbox(r) == box_of(m.at("bbox")));
    masks += eval::rle_to_string(r) == m.at("counts").get<std::string>();
  }
  size_t merges = 0;
  for (const auto& m : ref.at("merges")) {
    const int h = m.at("h").get<int>(), w = m.at("w").get<int>();
    std::vector<Rle> rles;
    for (const auto& c : m.at("counts"))
      rles.push_back(eval::rle_from_string(c.get<std::string>(), h, w));
    const std::string merged =
        eval::rle_to_string(eval::rle_merge(rles, m.at("intersect").get<int>() != 0));
    CHECK(merged == m.at("merged").get<std::string>());
    merges += merged == m.at("merged").get<std::string>();
  }
  size_t ious = 0, iou_values = 0;
  for (const auto& m : ref.at("ious")) {
    const int h = m.at("h").get<int>(), w = m.at("w").get<int>();
    std::vector<Rle> dt, gt;
    for (const auto& c : m.at("dt"))
      dt.push_back(eval::rle_from_string(c.get<std::string>(), h, w));
    for (const auto& c : m.at("gt"))
      gt.push_back(eval::rle_from_string(c.get<std::string>(), h, w));
    const auto crowd = m.at("crowd").get<std::vector<uint8_t>>();
    const std::vector<double> got = eval::rle_iou(dt, gt, crowd);
    const auto want = m.at("iou").get<std::vector<double>>();  // pycocotools: [d][g], row-major
    CHECK(got == want);
    ious += got == want;
    iou_values += got.size();
  }
  MESSAGE("identical to pycocotools: "
          << polygons << "/" << ref.at("polygons").size() << " polygons, " << masks << "/"
          << ref.at("masks").size() << " encoded masks, " << merges << "/"
          << ref.at("merges").size() << " merges, " << ious << "/" << ref.at("ious").size()
          << " IoU matrices (" << iou_values << " values)");
}

TEST_CASE("segm: all 12 stats agree with pycocotools' COCOeval(iouType='segm') on coco128 (slow)") {
  SKIP_WITHOUT_REFERENCE("sets");
  const auto stats = nlohmann::json::parse(test::read_text(reference("sets").dir / "stats.json"));
  REQUIRE(stats.size() >= 14);
  const data::CocoFile gt = data::read_coco_json(reference("sets").gt_path);
  eval::CocoEvalOptions options;
  options.iou_type = eval::IouType::kSegm;
  test::compare_with_pycocotools(stats, gt, reference("sets").dir.path(), options, "segm");
}
