// The image store: the RAM cache plan against a budget (hand-computed), the budget default, a
// dataset larger than a small budget (encoded files for a part, pixels identical to decoding), and
// the disk cache's file checks (reuse, changed source, other imgsz, truncation, version, an
// unwritable folder).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/config.h"
#include "core/error.h"
#include "data/disk_cache.h"
#include "data/image_io.h"
#include "data/image_store.h"
#include "data_test_util.h"

namespace fs = std::filesystem;
using namespace trainer::data;
using trainer::core::CacheMode;
using trainer::test::TempDir;

namespace {

DatasetIndex make_images(const fs::path& dir, int n, const char* ext = ".jpg") {
  DatasetIndex index;
  index.names = {"a"};
  for (int i = 0; i < n; ++i) {
    const int h = 60 + 7 * (i % 5), w = 90 + 11 * (i % 3);
    ImageLabels item;
    item.image = dir / ("im" + std::to_string(i) + ext);
    trainer::test::write_image(item.image, trainer::test::pattern_image(h, w, i));
    item.height = h;
    item.width = w;
    index.items.push_back(item);
  }
  return index;
}

bool same_pixels(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

cv::Mat decoded(const DatasetIndex& index, size_t i, int imgsz) {
  return resize_long_side(read_image_bgr(index.items[i].image), imgsz);
}

}  // namespace

TEST_CASE("ram cache plan: decoded when all fit, else the files that fit, else nothing") {
  const std::vector<int64_t> files = {30, 50, 40};
  RamCachePlan p = plan_ram_cache(100, files, 100);
  CHECK(p.kind == StoreKind::kRamDecoded);
  CHECK(p.planned_bytes == 100);
  CHECK(p.encoded_bytes == 120);
  CHECK(p.images_in_ram == 3);
  p = plan_ram_cache(100, files, 99);  // 30 + 50 fit, 40 more would be 120
  CHECK(p.kind == StoreKind::kRamEncoded);
  CHECK(p.planned_bytes == 80);
  CHECK(p.images_in_ram == 2);
  CHECK(p.in_ram == std::vector<bool>{true, true, false});
  p = plan_ram_cache(1000, {60, 50, 30}, 90);  // 60 in, 50 skipped, 30 in
  CHECK(p.in_ram == std::vector<bool>{true, false, true});
  CHECK(p.planned_bytes == 90);
  p = plan_ram_cache(1000, {60, -1, 30}, 999);  // an unreadable file (-1) is never planned
  CHECK(p.kind == StoreKind::kRamEncoded);
  CHECK(p.in_ram == std::vector<bool>{true, false, true});
  p = plan_ram_cache(100, files, 20);  // not even the smallest file
  CHECK(p.kind == StoreKind::kFiles);
  CHECK(p.images_in_ram == 0);
}

TEST_CASE("ram cache budget: cache_gb, else half the available memory shared by local ranks") {
  CHECK(ram_cache_budget(2.5, 100'000'000'000, 1) == 2'500'000'000);
  CHECK(ram_cache_budget(2.5, 100'000'000'000, 4) == 625'000'000);  // the machine's, shared
  CHECK(ram_cache_budget(0.0, 10'000'000'000, 1) == 5'000'000'000);
  CHECK(ram_cache_budget(0.0, 10'000'000'000, 2) == 2'500'000'000);
  CHECK(ram_cache_budget(0.0, -1, 1) == 0);  // unknown memory: nothing cached
}

TEST_CASE("cache: ram on a dataset larger than its budget keeps the files that fit") {
  TempDir dir;
  const int n = 40, imgsz = 64;
  const DatasetIndex index = make_images(dir.path(), n);
  int64_t half = 0;
  for (int i = 0; i < n / 2; ++i) half += int64_t(fs::file_size(index.items[i].image));
  trainer::test::LogCapture log;
  auto store = ImageStore::open(index, imgsz, CacheMode::kRam, double(half) / 1e9, "", 2, true);
  CHECK(store->kind() == StoreKind::kRamEncoded);
  CHECK(store->images_in_ram() >= n / 2);
  CHECK(store->images_in_ram() < n);
  CHECK(store->ram_bytes() <= half);
  CHECK(log.text().find("ram (encoded files") != std::string::npos);  // the choice is logged
  for (size_t i = 0; i < size_t(n); ++i)
    CHECK(same_pixels(store->resized(i), decoded(index, i, imgsz)));
  // A budget below the smallest file: nothing cached, said so, images still load.
  auto none = ImageStore::open(index, imgsz, CacheMode::kRam, 1e-9, "", 1, true);
  CHECK(none->kind() == StoreKind::kFiles);
  CHECK(log.text().find("cache: ram holds nothing") != std::string::npos);
  CHECK(same_pixels(none->resized(3), decoded(index, 3, imgsz)));
  // A generous budget: decoded images, the same pixels.
  auto all = ImageStore::open(index, imgsz, CacheMode::kRam, 1.0, "", 2, false);
  CHECK(all->kind() == StoreKind::kRamDecoded);
  CHECK(all->ram_bytes() ==
        ImageStore::open(index, imgsz, CacheMode::kRam, 1.0, "", 1, false)->ram_bytes());
  for (size_t i = 0; i < size_t(n); ++i)
    CHECK(same_pixels(all->resized(i), decoded(index, i, imgsz)));
}

TEST_CASE("disk cache files: round trip and every check that refuses a stale file") {
  TempDir dir;
  const fs::path image = dir.path() / "a.png";
  trainer::test::write_image(image, trainer::test::pattern_image(30, 50));
  const cv::Mat resized = resize_long_side(read_image_bgr(image), 64);
  CHECK(disk_cache_file(image, 64, "") == dir.path() / "a.png.64.trimg");
  const fs::path elsewhere = disk_cache_file(image, 64, (dir.path() / "c").string());
  CHECK(elsewhere.parent_path() == dir.path() / "c");
  CHECK(elsewhere.filename().string().size() == 17 + std::string("a.png.64.trimg").size());
  const fs::path file = disk_cache_file(image, 64, "");
  const SourceStamp stamp = source_stamp(image);
  REQUIRE(stamp.size > 0);
  std::string why;
  CHECK(read_disk_cache(file, 64, stamp, &why).empty());
  CHECK(why == "missing");
  REQUIRE(write_disk_cache(file, resized, 64, stamp, &why));
  CHECK(fs::file_size(file) == 48 + size_t(resized.total() * 3));
  CHECK(disk_cache_header_ok(file, 64, stamp, resized.size(), &why));
  CHECK_FALSE(disk_cache_header_ok(file, 64, stamp, cv::Size(64, 64), &why));
  CHECK(why == "not the source's resized shape");  // a replaced source with the same size/time
  CHECK(same_pixels(read_disk_cache(file, 64, stamp, &why), resized));
  CHECK_FALSE(disk_cache_header_ok(file, 32, stamp, resized.size(), &why));
  CHECK(why == "made for another imgsz");
  SourceStamp touched = stamp;
  touched.mtime_ns += 1;
  CHECK(read_disk_cache(file, 64, touched, &why).empty());
  CHECK(why == "the source image changed");
  {  // another format version
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    const uint32_t v = kDiskCacheVersion + 1;
    f.write(reinterpret_cast<const char*>(&v), 4);
  }
  CHECK(read_disk_cache(file, 64, stamp, &why).empty());
  CHECK(why == "written by another cache format version");
  REQUIRE(write_disk_cache(file, resized, 64, stamp, &why));
  fs::resize_file(file, fs::file_size(file) - 1);  // a write cut short
  CHECK_FALSE(disk_cache_header_ok(file, 64, stamp, resized.size(), &why));
  CHECK(why == "truncated pixels");
  CHECK(read_disk_cache(file, 64, stamp, &why).empty());
  CHECK(why == "truncated pixels");
  trainer::test::write_text(file, "junk");
  CHECK(read_disk_cache(file, 64, stamp, &why).empty());
  CHECK(why == "truncated header");
}

TEST_CASE("cache: disk is written once, reused, rebuilt for a changed image, same pixels") {
  TempDir dir;
  const int imgsz = 48;
  const DatasetIndex index = make_images(dir.path(), 6, ".png");
  auto first = ImageStore::open(index, imgsz, CacheMode::kDisk, 0.0, "", 2, false);
  CHECK(first->kind() == StoreKind::kDisk);
  CHECK(first->disk_written() == 6);
  CHECK(first->disk_reused() == 0);
  CHECK(fs::exists(dir.path() / "im0.png.48.trimg"));  // beside the image, as the reference does
  for (size_t i = 0; i < 6; ++i) CHECK(same_pixels(first->resized(i), decoded(index, i, imgsz)));
  // One image replaced (new pixels, a new modification time): only its file is rebuilt.
  trainer::test::write_image(index.items[2].image, trainer::test::pattern_image(67, 90, 99));
  fs::last_write_time(index.items[2].image,
                      fs::last_write_time(index.items[2].image) + std::chrono::seconds(5));
  auto second = ImageStore::open(index, imgsz, CacheMode::kDisk, 0.0, "", 1, false);
  CHECK(second->disk_reused() == 5);
  CHECK(second->disk_written() == 1);
  CHECK(same_pixels(second->resized(2), decoded(index, 2, imgsz)));
  // Another imgsz has its own files.
  auto other = ImageStore::open(index, 32, CacheMode::kDisk, 0.0, "", 1, false);
  CHECK(other->disk_written() == 6);
  // A cache_dir that cannot be created is a clear error.
  trainer::test::write_text(dir.path() / "file", "x");
  CHECK_THROWS_AS(ImageStore::open(index, imgsz, CacheMode::kDisk, 0.0,
                                   (dir.path() / "file" / "sub").string(), 1, false),
                  trainer::core::InputError);
}

TEST_CASE("cache: disk in a folder it cannot write says so and reads the images") {
  TempDir dir;
  const DatasetIndex index = make_images(dir.path(), 3, ".png");
  trainer::test::LogCapture log;
  // /proc/self exists as a folder and takes no new files, even from root.
  auto store = ImageStore::open(index, 48, CacheMode::kDisk, 0.0, "/proc/self", 1, true);
  CHECK(store->disk_written() == 0);
  CHECK(log.text().find("could not write 3 of 3") != std::string::npos);
  CHECK(same_pixels(store->resized(1), decoded(index, 1, 48)));
  // Many images: it stops decoding for nothing after 8 failed writes.
  const DatasetIndex many = make_images(dir.path() / "many", 12, ".png");
  auto more = ImageStore::open(many, 48, CacheMode::kDisk, 0.0, "/proc/self", 1, true);
  CHECK(log.text().find("could not write 8 of 12 files and stopped trying") != std::string::npos);
  CHECK(same_pixels(more->resized(11), decoded(many, 11, 48)));
}
