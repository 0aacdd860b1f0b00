// Building a split: summary counts, every bad-input case with its message (logged once), the
// label cache and its invalidation, COCO json against the YOLO labels of coco128.
#include <doctest/doctest.h>

#include <fstream>
#include <map>

#include "core/error.h"
#include "data/dataset.h"
#include "data/image_io.h"
#include "data/label_cache.h"
#include "data_test_util.h"

namespace fs = std::filesystem;
using namespace trainer::data;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {

// A YOLO dataset in `root` with the given images (name -> label text, "-" = no label file).
DatasetSpec make_yolo(const fs::path& root, const std::map<std::string, std::string>& files,
                      int nc = 3) {
  int seed = 0;
  for (const auto& [name, label] : files) {
    trainer::test::write_image(root / "images" / "train" / name,
                               trainer::test::pattern_image(40 + seed, 60, seed));
    ++seed;
    if (label != "-") {
      write_text(root / "labels" / "train" / (fs::path(name).stem().string() + ".txt"), label);
    }
  }
  fs::create_directories(root / "labels" / "train");
  DatasetSpec spec;
  spec.yaml_file = root / "data.yaml";
  spec.root = root;
  spec.train = {root / "images" / "train"};
  for (int c = 0; c < nc; ++c) spec.names.push_back("c" + std::to_string(c));
  return spec;
}

LoadOptions no_cache() {
  LoadOptions o;
  o.use_cache = false;
  return o;
}

std::string input_error(const DatasetSpec& spec, const LoadOptions& options) {
  try {
    load_split(spec, Split::kTrain, options);
  } catch (const trainer::core::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("dataset: counts for a clean split with a background and an empty label file") {
  TempDir dir;
  auto spec = make_yolo(
      dir.path(),
      {{"a.jpg", "0 0.5 0.5 0.2 0.2\n1 0.3 0.3 0.1 0.1\n"}, {"b.png", ""}, {"c.jpg", "-"}});
  trainer::test::LogCapture log;
  const DatasetIndex index = load_split(spec, Split::kTrain, no_cache());
  CHECK(index.size() == 3);
  CHECK(index.stats.images == 3);
  CHECK(index.stats.backgrounds == 2);
  CHECK(index.stats.empty_labels == 1);
  CHECK(index.stats.missing_labels == 1);
  CHECK(index.stats.boxes == 2);
  CHECK(index.stats.corrupt == 0);
  CHECK(index.items[0].width == 60);
  CHECK(index.items[0].height == 40);
  CHECK(index.items[1].image.filename() == "b.png");
  CHECK(index.items[1].height == 41);  // PNG header
  CHECK(log.count("3 images, 2 backgrounds, 0 corrupt") == 1);
}

TEST_CASE("dataset: every bad input is counted, skipped or repaired, and logged once") {
  TempDir dir;
  auto spec = make_yolo(dir.path(), {{"ok.jpg", "0 0.5 0.5 0.2 0.2\n"},
                                     {"arity.jpg", "0 0.5 0.5 0.2\n"},
                                     {"text.jpg", "0 0.5 0.5 0.2 0.2\n1 x 0.5 0.2 0.2\n"},
                                     {"range.jpg", "0 0.5 1.2 0.2 0.2\n"},
                                     {"dup.jpg", "2 0.5 0.5 0.2 0.2\n2 0.5 0.5 0.2 0.2\n"}});
  // A corrupt image (JPEG signature, then nothing usable) and a file that is no image at all.
  const auto not_an_image_error = [] {
    std::string why;
    CHECK(decode_image_bgr({'h', 'e', 'l', 'l', 'o'}, &why).empty());
    return why;
  };
  write_text(dir / "images/train/broken.jpg", std::string("\xFF\xD8\xFF\xE0\x00\x10", 6) + "junk");
  write_text(dir / "images/train/notimage.png", "hello");
  write_text(dir / "labels/train/broken.txt", "0 0.5 0.5 0.2 0.2\n");
  trainer::test::LogCapture log;
  const DatasetIndex index = load_split(spec, Split::kTrain, no_cache());
  CHECK(index.stats.images == 2);  // ok and dup
  CHECK(index.stats.corrupt == 5);
  CHECK(index.stats.duplicates == 1);
  CHECK(index.stats.boxes == 2);
  const std::string labels = (dir / "labels/train").string();
  const std::string images = (dir / "images/train").string();
  const std::vector<std::string> expected = {
      labels + "/arity.txt:1: expected 5 values (class cx cy w h), got 4 (image skipped)",
      images + "/broken.jpg: skipped: corrupt JPEG: no frame header",
      labels + "/dup.txt: 1 duplicate labels removed",
      images + "/notimage.png: skipped: cannot decode image: " + not_an_image_error(),
      labels +
          "/range.txt:1: coordinate 1.2 is outside [-0.01, 1.01] (not normalised?) (image skipped)",
      labels + "/text.txt:2: value 2 is not a number: 'x' (image skipped)"};
  CHECK(index.stats.problems == expected);
  for (const auto& message : expected) CHECK(log.count(message) == 1);
  CHECK(log.count("2 images, 1 backgrounds, 5 corrupt") == 0);  // 0 backgrounds here
  CHECK(log.count("2 images, 0 backgrounds, 5 corrupt") == 1);
}

TEST_CASE("dataset: a missing image in a list file is named") {
  TempDir dir;
  auto spec = make_yolo(dir.path(), {{"a.jpg", "0 0.5 0.5 0.2 0.2\n"}});
  write_text(dir / "list.txt", "./images/train/a.jpg\nimages/train/missing.jpg\n");
  spec.train = {dir / "list.txt"};
  const DatasetIndex index = load_split(spec, Split::kTrain, no_cache());
  CHECK(index.stats.images == 1);
  CHECK(index.stats.corrupt == 1);
  REQUIRE(index.stats.problems.size() == 1);
  CHECK(index.stats.problems[0] ==
        (dir / "images/train/missing.jpg").string() + ": skipped: image not found or unreadable");
}

TEST_CASE(
    "dataset: a split without usable images lists the first 5 files' problems, then a count") {
  TempDir dir;
  std::map<std::string, std::string> files;
  for (int i = 0; i < 7; ++i) files[std::to_string(i) + ".jpg"] = "0 0.5 0.5 0.2\n";  // 4 values
  const std::string e = input_error(make_yolo(dir.path(), files), no_cache());
  CHECK(e.find("7 corrupt") != std::string::npos);
  int listed = 0;
  for (size_t at = e.find("\n  "); at != std::string::npos; at = e.find("\n  ", at + 1)) ++listed;
  CHECK(listed == 6);  // five problems and the count
  CHECK(e.find("\n  ... and 2 more (trainer data check lists them all)") != std::string::npos);
  CHECK(e.find(".txt:1: ") != std::string::npos);
}

TEST_CASE("dataset: no usable image and a missing folder are errors") {
  TempDir dir;
  auto spec = make_yolo(dir.path(), {{"a.jpg", "9 0.5 0.5 0.2 0.2\n"}});
  const std::string e = input_error(spec, no_cache());
  CHECK(e.find("no usable images in the train split (0 images, 0 backgrounds, 1 corrupt") !=
        std::string::npos);
  // Why, per file, in the error itself.
  CHECK(e.find("1 corrupt, 0 boxes):\n  " + (dir / "labels/train/a.txt").string() + ":1: ") !=
        std::string::npos);
  spec.train = {dir / "nowhere"};
  CHECK(input_error(spec, no_cache()) ==
        (dir / "nowhere").string() + ": image folder or list does not exist");
  fs::create_directories(dir / "empty");
  spec.train = {dir / "empty"};
  CHECK(input_error(spec, no_cache()) == (dir / "empty").string() + ": no images found");
  spec.train.clear();
  CHECK(input_error(spec, no_cache()).find("the dataset has no 'train' split") !=
        std::string::npos);
}

TEST_CASE("dataset: the label cache is reused and invalidated by a changed file") {
  TempDir dir;
  auto spec =
      make_yolo(dir.path(), {{"a.jpg", "0 0.5 0.5 0.2 0.2\n"}, {"b.jpg", "1 0.5 0.5 0.2 0.2\n"}});
  LoadOptions options;
  options.cache_dir = dir / "cache";
  options.log = false;
  const DatasetIndex first = load_split(spec, Split::kTrain, options);
  CHECK_FALSE(first.from_cache);
  const DatasetIndex second = load_split(spec, Split::kTrain, options);
  CHECK(second.from_cache);
  REQUIRE(second.size() == 2);
  CHECK(second.items[1].classes == first.items[1].classes);
  CHECK((second.items[1].boxes == first.items[1].boxes));
  CHECK(second.items[0].width == 60);
  CHECK(summary_line(second.stats) == summary_line(first.stats));
  // Editing a label file changes its size: the cache is rebuilt with the new content.
  write_text(dir / "labels/train/b.txt", "2 0.5 0.5 0.2 0.2\n0 0.1 0.1 0.1 0.1\n");
  const DatasetIndex third = load_split(spec, Split::kTrain, options);
  CHECK_FALSE(third.from_cache);
  CHECK(third.items[1].classes.size() == 2);
  // A new image invalidates it too.
  trainer::test::write_image(dir / "images/train/c.jpg", trainer::test::pattern_image(30, 30));
  CHECK_FALSE(load_split(spec, Split::kTrain, options).from_cache);
  CHECK(load_split(spec, Split::kTrain, options).from_cache);
  // A garbage cache file is ignored and replaced.
  for (const auto& entry : fs::directory_iterator(dir / "cache"))
    write_text(entry.path(), "TRLCxx");
  CHECK_FALSE(load_split(spec, Split::kTrain, options).from_cache);
}

TEST_CASE("dataset: the cache goes beside the labels, or elsewhere when that folder is read-only") {
  TempDir dir;
  fs::create_directories(dir / "labels");
  CHECK(label_cache_path(dir / "labels/train.cache", std::nullopt) == dir / "labels/train.cache");
  fs::create_directories(dir / "ro/labels");
  fs::permissions(dir / "ro/labels",
                  fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  const fs::path moved = label_cache_path(dir / "ro/labels/train.cache", std::nullopt);
  CHECK(moved.parent_path().filename() == "labels");
  CHECK(moved.filename().string().rfind("train-", 0) == 0);
  CHECK(moved.parent_path() != dir / "ro/labels");
  fs::permissions(dir / "ro/labels", fs::perms::owner_write, fs::perm_options::add);
}

TEST_CASE("dataset: COCO json split with crowd boxes and a custom category map") {
  TempDir dir;
  trainer::test::write_image(dir / "images/train/x.jpg", trainer::test::pattern_image(100, 200));
  trainer::test::write_image(dir / "images/train/y.jpg", trainer::test::pattern_image(50, 50));
  write_text(dir / "annotations/instances_train.json", R"({
    "images": [{"id": 5, "file_name": "x.jpg", "width": 200, "height": 100},
               {"id": 6, "file_name": "y.jpg", "width": 50, "height": 50},
               {"id": 7, "file_name": "gone.jpg", "width": 50, "height": 50}],
    "categories": [{"id": 10, "name": "a"}, {"id": 20, "name": "b"}],
    "annotations": [
      {"id": 1, "image_id": 5, "category_id": 20, "bbox": [20, 10, 40, 30], "iscrowd": 0},
      {"id": 2, "image_id": 5, "category_id": 20, "bbox": [20, 10, 40, 30], "iscrowd": 0},
      {"id": 3, "image_id": 5, "category_id": 10, "bbox": [0, 0, 200, 100], "iscrowd": 1},
      {"id": 4, "image_id": 5, "category_id": 10, "bbox": [5, 5, 0, 10]}]})");
  DatasetSpec spec;
  spec.root = dir.path();
  spec.train = {dir / "images/train"};
  spec.train_json = dir / "annotations/instances_train.json";
  spec.names = {"a", "b"};
  LoadOptions options;
  options.cache_dir = dir / "cache";
  const DatasetIndex index = load_split(spec, Split::kTrain, options);
  REQUIRE(index.size() == 2);  // gone.jpg is missing
  CHECK(index.stats.corrupt == 1);
  CHECK(index.stats.duplicates == 1);
  CHECK(index.stats.crowd == 1);
  const ImageLabels& x = index.items[0];
  CHECK(x.coco_image_id == 5);
  REQUIRE(x.classes.size() == 1);  // the zero-width box is skipped
  CHECK(x.classes[0] == 1);        // category 20 is the second of the sorted ids
  // bbox [20, 10, 40, 30] in 200x100: centre (40, 25) -> (0.2, 0.25), size (0.2, 0.3).
  CHECK(x.boxes[0][0] == doctest::Approx(0.2));
  CHECK(x.boxes[0][1] == doctest::Approx(0.25));
  CHECK(x.boxes[0][2] == doctest::Approx(0.2));
  CHECK(x.boxes[0][3] == doctest::Approx(0.3));
  REQUIRE(x.crowd_boxes.size() == 1);
  CHECK(x.crowd_classes[0] == 0);
  CHECK(x.crowd_boxes[0][2] == doctest::Approx(1.0));
  CHECK(index.items[1].boxes.empty());
  CHECK(load_split(spec, Split::kTrain, options).from_cache);
  // A malformed json is an error naming the file.
  write_text(dir / "annotations/instances_train.json", "{\"images\": [");
  try {
    load_split(spec, Split::kTrain, options);
    FAIL("expected an error");
  } catch (const trainer::core::InputError& e) {
    CHECK(std::string(e.what()).find("instances_train.json: malformed json") != std::string::npos);
  }
}

TEST_CASE("dataset: a COCO image without a size trains with its boxes, sized from its file") {
  TempDir dir;
  trainer::test::write_image(dir / "images/train/x.jpg", trainer::test::pattern_image(100, 200));
  trainer::test::write_image(dir / "images/train/y.jpg", trainer::test::pattern_image(50, 50));
  write_text(dir / "annotations/instances_train.json", R"({
    "images": [{"id": 5, "file_name": "x.jpg", "width": 0, "height": 0},
               {"id": 6, "file_name": "y.jpg"}],
    "categories": [{"id": 1, "name": "a"}],
    "annotations": [
      {"id": 1, "image_id": 5, "category_id": 1, "bbox": [20, 10, 40, 30]},
      {"id": 2, "image_id": 6, "category_id": 1, "bbox": [0, 0, 25, 50]}]})");
  DatasetSpec spec;
  spec.root = dir.path();
  spec.train = {dir / "images/train"};
  spec.train_json = dir / "annotations/instances_train.json";
  spec.names = {"a"};
  trainer::test::LogCapture log;
  const DatasetIndex index = load_split(spec, Split::kTrain, no_cache());
  REQUIRE(index.size() == 2);
  // x.jpg is 200 x 100: bbox [20, 10, 40, 30] -> centre (0.2, 0.25), size (0.2, 0.3).
  REQUIRE(index.items[0].boxes.size() == 1);
  CHECK(index.items[0].width == 200);
  CHECK(index.items[0].boxes[0][0] == doctest::Approx(0.2));
  CHECK(index.items[0].boxes[0][1] == doctest::Approx(0.25));
  CHECK(index.items[0].boxes[0][3] == doctest::Approx(0.3));
  REQUIRE(index.items[1].boxes.size() == 1);
  CHECK(index.items[1].boxes[0][2] == doctest::Approx(0.5));
  CHECK(index.stats.backgrounds == 0);
  int sized = 0;
  for (const std::string& problem : index.stats.problems) {
    sized += problem.find(
                 "2 images have no \"width\"/\"height\" (missing or 0; the first: image "
                 "id 5); their sizes are read from the image files") != std::string::npos;
  }
  CHECK(sized == 1);
}

TEST_CASE(
    "dataset: COCO category names that differ from the yaml's names are refused side by side") {
  TempDir dir;
  trainer::test::write_image(dir / "images/train/x.jpg", trainer::test::pattern_image(20, 20));
  write_text(dir / "annotations/instances_train.json", R"({
    "images": [{"id": 1, "file_name": "x.jpg", "width": 20, "height": 20}],
    "categories": [{"id": 3, "name": "cat"}, {"id": 7, "name": "Dog "}, {"id": 9, "name": "bird"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 7, "bbox": [0, 0, 5, 5]}]})");
  DatasetSpec spec;
  spec.root = dir.path();
  spec.train = {dir / "images/train"};
  spec.train_json = dir / "annotations/instances_train.json";
  spec.names = {"cat", "dog", "bird"};  // case and spaces aside, the same order
  {
    trainer::test::LogCapture log;
    const DatasetIndex index = load_split(spec, Split::kTrain, no_cache());
    CHECK(index.items[0].classes[0] == 1);
    CHECK(log.count("category id -> class: 3 -> 0 (cat), 7 -> 1 (dog), 9 -> 2 (bird)") == 1);
  }
  spec.names = {"dog", "cat", "bird"};  // a yaml written in another order
  const std::string error = input_error(spec, no_cache());
  CHECK(error == (dir / "annotations/instances_train.json").string() +
                     ": the categories' names do not match the dataset yaml's names for 2 of 3 "
                     "classes (a box would train under the wrong name); make the yaml's names list "
                     "the categories in the order of their ids:\n"
                     "  class   0: yaml 'dog' | json category id 3 'cat'\n"
                     "  class   1: yaml 'cat' | json category id 7 'Dog '");
  // A cached split is not a way around the check: the names are part of the cache key.
  LoadOptions cached;
  cached.cache_dir = dir / "cache";
  spec.names = {"cat", "dog", "bird"};
  load_split(spec, Split::kTrain, cached);
  spec.names = {"dog", "cat", "bird"};
  CHECK_FALSE(input_error(spec, cached).empty());
}

TEST_CASE("dataset: a label file mixing box and polygon rows is trained on with a warning") {
  TempDir dir;
  const DatasetSpec spec =
      make_yolo(dir.path(), {{"a.jpg", "0 0.5 0.5 0.2 0.2\n1 0.1 0.2 0.5 0.2 0.3 0.6\n"}});
  const DatasetIndex index = load_split(spec, Split::kTrain, no_cache());
  REQUIRE(index.size() == 1);
  CHECK(index.items[0].boxes.size() == 2);
  REQUIRE(index.stats.problems.size() == 1);
  CHECK(index.stats.problems[0].find("a.txt:2: box rows (5 values, first at line 1) and polygon "
                                     "rows (first at line 2) are mixed") != std::string::npos);
}

TEST_CASE("dataset: coco128 json boxes equal its YOLO labels within 1e-5") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(root, "coco128");
  DatasetSpec yolo;
  yolo.root = *root;
  yolo.train = {*root / "images/train2017"};
  for (int c = 0; c < 80; ++c) yolo.names.push_back(std::to_string(c));
  DatasetSpec coco = yolo;
  coco.train_json = *root / "annotations/instances_train2017.json";
  LoadOptions options;
  TempDir cache;
  options.cache_dir = cache.path();
  const DatasetIndex a = load_split(yolo, Split::kTrain, options);
  const DatasetIndex b = load_split(coco, Split::kTrain, options);
  // 128 images; 250 and 508 have no labels; 929 boxes; 10 crowd annotations kept aside.
  CHECK(a.stats.images == 128);
  CHECK(a.stats.backgrounds == 2);
  CHECK(a.stats.corrupt == 0);
  CHECK(a.stats.boxes == 929);
  CHECK(b.stats.images == 128);
  CHECK(b.stats.boxes == 929);
  CHECK(b.stats.crowd == 10);
  REQUIRE(a.size() == b.size());
  int matched = 0;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a.items[i].image == b.items[i].image);
    CHECK(a.items[i].coco_image_id == b.items[i].coco_image_id);
    CHECK(a.items[i].width == b.items[i].width);
    REQUIRE(a.items[i].boxes.size() == b.items[i].boxes.size());
    for (size_t k = 0; k < b.items[i].boxes.size(); ++k) {
      double best = 1e9;
      for (size_t j = 0; j < a.items[i].boxes.size(); ++j) {
        if (a.items[i].classes[j] != b.items[i].classes[k]) continue;
        double d = 0;
        for (int c = 0; c < 4; ++c) {
          d = std::max(d, double(std::abs(a.items[i].boxes[j][c] - b.items[i].boxes[k][c])));
        }
        best = std::min(best, d);
      }
      worst = std::max(worst, best);
      matched += best <= 1e-5;
    }
  }
  CHECK(matched == 929);
  CHECK(worst <= 1e-5);
}

TEST_CASE("image io: grayscale and 4-channel files become 3-channel BGR") {
  TempDir dir;
  cv::Mat gray(20, 30, CV_8UC1, cv::Scalar(77));
  trainer::test::write_image(dir / "g.png", gray);
  cv::Mat rgba(20, 30, CV_8UC4, cv::Scalar(10, 20, 30, 128));
  trainer::test::write_image(dir / "a.png", rgba);
  const cv::Mat g = read_image_bgr(dir / "g.png");
  CHECK(g.channels() == 3);
  CHECK((g.at<cv::Vec3b>(5, 5) == cv::Vec3b(77, 77, 77)));
  const cv::Mat a = read_image_bgr(dir / "a.png");
  CHECK(a.channels() == 3);
  CHECK((a.at<cv::Vec3b>(5, 5) == cv::Vec3b(10, 20, 30)));
  // A file that exists but is no image, and a missing file, get different messages.
  trainer::test::write_text(dir / "text.png", "not an image");
  const std::string corrupt = (dir / "text.png").string() + ": cannot decode image: ";
  CHECK_THROWS_WITH_AS(read_image_bgr(dir / "text.png"), doctest::Contains(corrupt.c_str()),
                       trainer::core::InputError);
  CHECK_THROWS_WITH_AS(read_image_bgr(dir / "none.png"),
                       ((dir / "none.png").string() + ": image not found or unreadable").c_str(),
                       trainer::core::InputError);
}

TEST_CASE("image io: the long-side resize rule") {
  // 480x640 at 320: r = 0.5 -> 320 x 240. 427x640 at 320: ceil(213.5) = 214.
  CHECK((long_side_size(480, 640, 320) == cv::Size(320, 240)));
  CHECK((long_side_size(427, 640, 320) == cv::Size(320, 214)));
  CHECK((long_side_size(640, 640, 640) == cv::Size(640, 640)));
  // 333x500 at 640: r = 1.28 -> ceil(426.24) = 427 (upscaled as the reference does).
  CHECK((long_side_size(333, 500, 640) == cv::Size(640, 427)));
}

TEST_CASE("image io: coco128's grayscale image loads as 3 channels") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(root, "coco128");
  const cv::Mat im = read_image_bgr(*root / "images/train2017/000000000086.jpg");
  CHECK(im.channels() == 3);
  CHECK(im.rows == 640);
  CHECK(im.cols == 512);
}

TEST_CASE("dataset: images are decoded when the cache is built and the verdicts are cached") {
  TempDir dir;
  auto spec = make_yolo(dir.path(), {{"ok.jpg", "0 0.5 0.5 0.2 0.2\n"}});
  std::vector<uint8_t> jpeg;
  REQUIRE(read_file_bytes(dir / "images/train/ok.jpg", &jpeg));
  const auto write_prefix = [&](const std::string& name, size_t n) {
    std::ofstream(dir / "images/train" / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(jpeg.data()), static_cast<std::streamsize>(n));
  };
  // The header is whole but the scan is gone: only a full decode finds out.
  size_t sof = 0;
  while (!(jpeg[sof] == 0xFF && jpeg[sof + 1] == 0xC0)) ++sof;
  write_prefix("nopixels.jpg", sof + 19);
  write_prefix("truncated.jpg", jpeg.size() * 6 / 10);  // decodes, the rest filled
  LoadOptions options;
  options.cache_dir = dir / "cache";
  options.log = false;
  const DatasetIndex first = load_split(spec, Split::kTrain, options);
  const std::string images = (dir / "images/train").string();
  const std::vector<std::string> expected = {
      images + "/nopixels.jpg: skipped: cannot decode image: corrupt JPEG",
      images + "/truncated.jpg: JPEG has no end marker (truncated?); it decodes (the decoder " +
          "fills the missing part), kept, file unchanged"};
  CHECK(first.stats.problems == expected);
  CHECK(first.stats.images == 2);
  CHECK(first.stats.corrupt == 1);
  const DatasetIndex second = load_split(spec, Split::kTrain, options);
  CHECK(second.from_cache);
  CHECK(second.stats.problems == expected);
  REQUIRE(second.size() == 2);
  CHECK(second.items[1].image == dir / "images/train/truncated.jpg");
  CHECK(second.items[1].width == 60);
}
