// Hostile cache files: a label cache or disk cache file whose counts or shape its bytes cannot hold
// is refused before anything of that size is allocated (the caller rebuilds it); and the fuzz
// seeds of both readers are what the project's writers write.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "alloc_probe.h"
#include "data/dataset.h"
#include "data/disk_cache.h"
#include "data/label_cache.h"
#include "data_test_util.h"

namespace fs = std::filesystem;
using namespace trainer::data;
using trainer::test::AllocationProbe;
using trainer::test::TempDir;

namespace {

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << bytes;
}

void patch_u64(std::string& bytes, size_t at, uint64_t v) {
  std::memcpy(&bytes[at], &v, sizeof(v));
}

void patch_u32(std::string& bytes, size_t at, uint32_t v) {
  std::memcpy(&bytes[at], &v, sizeof(v));
}

// One image with one box and one problem line: 202 bytes. Header 16 (magic, version, hash), the
// item count 8, the item 97 (path 8 + 5, width and height 8, COCO id 8, classes 8 + 4, boxes
// 8 + 16, keypoints 8, polygon count 8, crowd classes 8, crowd boxes 8), the stats 64, the problem
// count 8, the problem 8 + 1.
CachedSplit one_item_split() {
  CachedSplit split;
  ImageLabels item;
  item.image = "a.jpg";
  item.width = 60;
  item.height = 40;
  item.classes = {0};
  item.boxes = {{0.5f, 0.5f, 0.2f, 0.2f}};
  split.items.push_back(item);
  split.stats.images = 1;
  split.stats.boxes = 1;
  split.stats.problems = {"p"};
  return split;
}

constexpr size_t kItemCountAt = 16;
constexpr size_t kProblemCountAt = 202 - 9 - 8;
constexpr uint64_t kHugeCount = uint64_t{1} << 40;

// Every kind of content the label cache holds: boxes, keypoints, polygons, crowd boxes, problems.
CachedSplit seed_split(int kind) {
  CachedSplit split;
  if (kind == 0) return split;  // an empty split
  split = one_item_split();
  if (kind == 2) {
    ImageLabels pose;
    pose.image = "images/train/000000000009.jpg";
    pose.width = 640;
    pose.height = 480;
    pose.coco_image_id = 9;
    pose.classes = {0, 2};
    pose.boxes = {{0.5f, 0.5f, 0.25f, 0.5f}, {0.1f, 0.2f, 0.05f, 0.1f}};
    pose.keypoints = {0.5f, 0.4f, 2.0f, 0.1f, 0.2f, 1.0f};
    pose.segments = {{0.4f, 0.3f, 0.6f, 0.3f, 0.6f, 0.7f}, {0.1f, 0.1f, 0.12f, 0.3f, 0.08f, 0.3f}};
    pose.crowd_classes = {1};
    pose.crowd_boxes = {{0.3f, 0.3f, 0.2f, 0.2f}};
    split.items.push_back(pose);
    split.stats.images = 2;
    split.stats.boxes = 3;
    split.stats.crowd = 1;
    split.stats.problems.push_back("labels/b.txt: 1 duplicate labels removed");
  }
  return split;
}

// The seeds compared with (or, with TRAINER_WRITE_FUZZ_SEEDS=1, written from) the writers' output.
void check_seed(const fs::path& seed, const std::string& bytes) {
  INFO(seed.string());
  if (std::getenv("TRAINER_WRITE_FUZZ_SEEDS")) write_bytes(seed, bytes);
  REQUIRE(fs::exists(seed));
  CHECK(read_bytes(seed) == bytes);
}

}  // namespace

TEST_CASE("allocation probe: sees the largest operator new and cv::Mat requests") {
  AllocationProbe probe;
  const std::vector<char> bytes(123456);
  const cv::Mat image(100, 70, CV_8UC3);  // 100 x 70 x 3 = 21000 bytes
  CHECK(probe.largest_new() == 123456);
  CHECK(probe.largest_mat() == 21000);
}

TEST_CASE("label cache: a count its bytes cannot hold is corrupt, allocates nothing, is logged") {
  TempDir dir;
  const fs::path file = dir / "train.cache";
  save_label_cache(file, 7, one_item_split());
  const std::string good = read_bytes(file);
  REQUIRE(good.size() == 202);
  REQUIRE(load_label_cache(file, 7).has_value());

  std::string bytes = good;
  patch_u64(bytes, kItemCountAt, kHugeCount);
  write_bytes(file, bytes);
  {
    trainer::test::LogCapture log;
    AllocationProbe probe;
    CHECK_FALSE(load_label_cache(file, 7).has_value());
    CHECK(probe.largest_new() < (1 << 20));  // a file buffer, not 2^40 items
    // 178 bytes follow the count; an item takes at least 72.
    CHECK(log.count("label cache " + file.string() +
                    " is corrupt (a count of 1099511627776 images where the 178 bytes left hold "
                    "at most 2); rebuilding it") == 1);
  }
  bytes = good;
  patch_u64(bytes, kProblemCountAt, kHugeCount);
  std::string why;
  {
    AllocationProbe probe;
    CHECK_FALSE(parse_label_cache(bytes, 7, &why).has_value());
    CHECK(probe.largest_new() < (1 << 20));
  }
  CHECK(why == "a count of 1099511627776 problems where the 9 bytes left hold at most 1");
  // Counts the bytes can hold but that leave the file short or long: corrupt too.
  bytes = good;
  patch_u64(bytes, kItemCountAt, 3);
  CHECK_FALSE(parse_label_cache(bytes, 7, &why).has_value());
  CHECK(why == "a count of 3 images where the 178 bytes left hold at most 2");
  patch_u64(bytes, kItemCountAt, 2);  // possible, but the stats are no second item
  CHECK_FALSE(parse_label_cache(bytes, 7, &why).has_value());
  CHECK_FALSE(why.empty());
  CHECK_FALSE(parse_label_cache(good + "x", 7, &why).has_value());
  CHECK(why == "trailing bytes");
  CHECK_FALSE(parse_label_cache(good.substr(0, 201), 7, &why).has_value());
  CHECK(why == "a count of 1 bytes of text where the 0 bytes left hold at most 0");
  CHECK_FALSE(parse_label_cache("TRLD" + good.substr(4), 7, &why).has_value());
  CHECK(why == "not a label cache");
  // Another hash or version is stale, not corrupt: no reason, nothing logged.
  trainer::test::LogCapture log;
  write_bytes(file, good);
  CHECK_FALSE(load_label_cache(file, 8).has_value());
  CHECK_FALSE(parse_label_cache(good, 8, &why).has_value());
  CHECK(why.empty());
  CHECK(log.text().empty());
  // The reader and the writer agree byte for byte.
  const auto parsed = parse_label_cache(good, 7, &why);
  REQUIRE(parsed.has_value());
  CHECK(serialize_label_cache(7, *parsed) == good);
}

TEST_CASE("label cache: a corrupt cache file makes load_split rebuild and rewrite it") {
  TempDir dir;
  trainer::test::write_image(dir / "images/train/a.jpg", trainer::test::pattern_image(40, 60));
  trainer::test::write_text(dir / "labels/train/a.txt", "0 0.5 0.5 0.2 0.2\n");
  DatasetSpec spec;
  spec.yaml_file = dir / "data.yaml";
  spec.root = dir.path();
  spec.train = {dir / "images/train"};
  spec.names = {"a"};
  LoadOptions options;
  options.cache_dir = dir / "cache";
  options.log = false;
  CHECK_FALSE(load_split(spec, Split::kTrain, options).from_cache);
  REQUIRE(load_split(spec, Split::kTrain, options).from_cache);
  fs::path cache;
  for (const auto& entry : fs::directory_iterator(dir / "cache")) cache = entry.path();
  std::string bytes = read_bytes(cache);
  patch_u64(bytes, kItemCountAt, kHugeCount);
  write_bytes(cache, bytes);
  trainer::test::LogCapture log;
  const DatasetIndex rebuilt = load_split(spec, Split::kTrain, options);
  CHECK_FALSE(rebuilt.from_cache);
  CHECK(rebuilt.size() == 1);
  CHECK(log.count("is corrupt (a count of 1099511627776 images") == 1);
  CHECK(load_split(spec, Split::kTrain, options).from_cache);  // rewritten
}

TEST_CASE("disk cache: a header shape the file does not hold is refused before allocating") {
  TempDir dir;
  const fs::path file = dir / "a.png.8192.trimg";
  const SourceStamp stamp{1234, 5678};
  const cv::Mat image(10, 10, CV_8UC3, cv::Scalar(1, 2, 3));
  std::string why;
  REQUIRE(write_disk_cache(file, image, 8192, stamp, &why));
  const std::string good = read_bytes(file);
  REQUIRE(good.size() == 48 + 300);
  std::string bytes = good;
  patch_u32(bytes, 16, 8192);  // rows
  patch_u32(bytes, 20, 8192);  // cols: 192 MiB of pixels claimed, 300 bytes present
  write_bytes(file, bytes);
  {
    AllocationProbe probe;
    CHECK(read_disk_cache(file, 8192, stamp, &why).empty());
    CHECK(why == "truncated pixels");
    CHECK_FALSE(disk_cache_header_ok(file, 8192, stamp, cv::Size(8192, 8192), &why));
    CHECK(why == "truncated pixels");
    CHECK(parse_disk_cache(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 8192,
                           stamp, &why)
              .empty());
    CHECK(probe.largest_mat() < 4096);
  }
  // The bytes entry point gives what the file reader gives.
  const auto* data = reinterpret_cast<const uint8_t*>(good.data());
  const cv::Mat parsed = parse_disk_cache(data, good.size(), 8192, stamp, &why);
  REQUIRE(parsed.size() == image.size());
  CHECK(cv::norm(parsed, image, cv::NORM_INF) == 0);
  write_bytes(file, good + "x");
  CHECK(read_disk_cache(file, 8192, stamp, &why).empty());
  CHECK(why == "trailing bytes");
  cv::Size shape;
  CHECK_FALSE(check_disk_cache_header(data, 47, good.size(), 8192, stamp, &shape, &why));
  CHECK(why == "truncated header");
  CHECK(check_disk_cache_header(data, 48, good.size(), 8192, stamp, &shape, &why));
  CHECK(shape == cv::Size(10, 10));
  CHECK_FALSE(check_disk_cache_header(data, 48, good.size() - 1, 8192, stamp, &shape, &why));
  CHECK(why == "truncated pixels");
}

TEST_CASE("fuzz seeds: the label and disk cache seeds are what the writers write") {
  const fs::path seeds = fs::path(TRAINER_SOURCE_DIR) / "tests/fuzz/seeds";
  // The fuzz target takes the hash from the file itself.
  const std::map<std::string, int> label_seeds = {
      {"empty.cache", 0}, {"one_item.cache", 1}, {"pose_polygons_crowd.cache", 2}};
  for (const auto& [name, kind] : label_seeds) {
    check_seed(seeds / "label_cache" / name, serialize_label_cache(0x5EED, seed_split(kind)));
  }
  TempDir dir;
  const std::map<std::string, cv::Size> disk_seeds = {{"7x5.trimg", cv::Size(7, 5)},
                                                      {"1x1.trimg", cv::Size(1, 1)}};
  for (const auto& [name, size] : disk_seeds) {
    cv::Mat image(size, CV_8UC3);
    for (int i = 0; i < int(image.total() * 3); ++i) image.data[i] = static_cast<uint8_t>(i * 29);
    std::string why;
    REQUIRE(write_disk_cache(dir / name, image, 7, SourceStamp{1000, 2000}, &why));
    check_seed(seeds / "disk_cache" / name, read_bytes(dir / name));
  }
}
