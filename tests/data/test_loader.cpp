// The loader: batch format, determinism for any worker count, epochs, close_mosaic, rect
// validation geometry, sharding, buffer reuse, the device copy, and the batch plot.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <algorithm>

#include "core/error.h"
#include "data/batch_plot.h"
#include "data/buffer_pool.h"
#include "data/dataset.h"
#include "data/image_store.h"
#include "data/loader.h"
#include "data/loader_options.h"
#include "data_test_util.h"

namespace fs = std::filesystem;
using namespace trainer::data;
using trainer::test::TempDir;

namespace {

// n images of varying shapes, each with one or two boxes.
DatasetIndex make_index(const fs::path& dir, int n) {
  DatasetIndex index;
  index.names = {"a", "b", "c"};
  for (int i = 0; i < n; ++i) {
    const int h = 40 + 13 * (i % 4), w = 50 + 17 * (i % 3);
    ImageLabels item;
    item.image = dir / ("im" + std::to_string(i) + ".png");
    trainer::test::write_image(item.image, trainer::test::pattern_image(h, w, i));
    item.width = w;
    item.height = h;
    item.classes = {i % 3};
    item.boxes = {{0.5f, 0.5f, 0.4f, 0.6f}};
    if (i % 2) {
      item.classes.push_back((i + 1) % 3);
      item.boxes.push_back({0.25f, 0.3f, 0.3f, 0.2f});
    }
    index.items.push_back(item);
  }
  return index;
}

// Three images of aspect h/w 2, 0.5 and 1 (200x100, 100x200, 100x100), one centred box each.
DatasetIndex three_shapes(const fs::path& dir) {
  DatasetIndex index;
  index.names = {"a"};
  const std::vector<std::array<int, 2>> sizes = {{200, 100}, {100, 200}, {100, 100}};  // h, w
  for (size_t i = 0; i < sizes.size(); ++i) {
    ImageLabels item;
    item.image = dir / ("v" + std::to_string(i) + ".png");
    trainer::test::write_image(item.image, trainer::test::pattern_image(sizes[i][0], sizes[i][1]));
    item.height = sizes[i][0];
    item.width = sizes[i][1];
    item.classes = {0};
    item.boxes = {{0.5f, 0.5f, 0.5f, 0.5f}};
    index.items.push_back(item);
  }
  return index;
}

LoaderOptions train_options(int workers) {
  LoaderOptions o;
  o.imgsz = 64;
  o.batch = 3;
  o.workers = workers;
  o.seed = 5;
  o.show_progress = false;
  o.augment_settings.degrees = 10;  // exercise every branch of the affine
  o.augment_settings.shear = 2;
  o.augment_settings.perspective = 0.0005;
  o.augment_settings.mixup = 0.5;
  o.augment_settings.flipud = 0.5;
  return o;
}

std::vector<Batch> epoch(Loader& loader, int e, bool mosaic = true) {
  loader.start_epoch(e, mosaic);
  std::vector<Batch> out;
  while (auto b = loader.next()) {
    Batch copy = *b;
    copy.images = b->images.clone();  // the loader reuses its buffers
    out.push_back(copy);
  }
  return out;
}

bool same(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!torch::equal(a[i].images, b[i].images) || !torch::equal(a[i].labels, b[i].labels) ||
        a[i].dataset_indices != b[i].dataset_indices) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("loader: batch format") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 7);
  Loader loader(index, train_options(1));
  CHECK(loader.batches_per_epoch() == 3);  // ceil(7 / 3)
  const auto batches = epoch(loader, 0);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0].images.sizes() == torch::IntArrayRef({3, 3, 64, 64}));
  CHECK(batches[2].images.size(0) == 1);
  CHECK(batches[0].images.dtype() == torch::kUInt8);
  std::set<int64_t> seen;
  for (const auto& b : batches) {
    CHECK(b.labels.dim() == 2);
    CHECK(b.labels.size(1) == 6);
    CHECK(b.labels.dtype() == torch::kFloat32);
    CHECK(b.files.size() == static_cast<size_t>(b.images.size(0)));
    if (b.labels.size(0) > 0) {
      CHECK(b.labels.select(1, 0).max().item<float>() < b.images.size(0));
      CHECK(b.labels.select(1, 1).max().item<float>() <= 2);
      CHECK(b.labels.slice(1, 2).min().item<float>() >= 0);
      CHECK(b.labels.slice(1, 2).max().item<float>() <= 1);
    }
    for (auto i : b.dataset_indices) seen.insert(i);
  }
  CHECK(seen.size() == 7);  // every image once per epoch
}

TEST_CASE("loader: the same seed gives the same batches with 0, 1 or 2 workers") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 8);
  Loader l0(index, train_options(0)), l1(index, train_options(1)), l2(index, train_options(2));
  const auto a = epoch(l0, 3), b = epoch(l1, 3), c = epoch(l2, 3);
  CHECK(same(a, b));
  CHECK(same(a, c));
  CHECK(same(a, epoch(l0, 3)));        // rerun (a resume) is identical
  CHECK_FALSE(same(a, epoch(l0, 4)));  // another epoch differs
  auto other = train_options(2);
  other.seed = 6;
  Loader l3(index, other);
  CHECK_FALSE(same(a, epoch(l3, 3)));  // another seed differs
  // Every image store gives the pixels of decoding each time: the RAM cache with decoded images,
  // with the encoded files (a budget the decoded images do not fit), and the disk cache.
  auto cached = train_options(2);
  cached.cache = trainer::core::CacheMode::kRam;
  Loader l4(index, cached);
  CHECK(l4.images().kind() == StoreKind::kRamDecoded);
  CHECK(l4.images().images_in_ram() == 8);
  CHECK(same(a, epoch(l4, 3)));
  int64_t file_bytes = 0;
  for (const auto& item : index.items) file_bytes += int64_t(fs::file_size(item.image));
  cached.cache_gb = double(file_bytes) / 1e9;  // the PNGs fit; their decoded pixels do not
  Loader l5(index, cached);
  CHECK(l5.images().kind() == StoreKind::kRamEncoded);
  CHECK(l5.images().images_in_ram() == 8);
  CHECK(l5.images().ram_bytes() == file_bytes);
  CHECK(same(a, epoch(l5, 3)));
  auto disk = train_options(2);
  disk.cache = trainer::core::CacheMode::kDisk;
  disk.cache_dir = (dir.path() / "cache").string();
  Loader l6(index, disk);
  CHECK(l6.images().kind() == StoreKind::kDisk);
  CHECK(same(a, epoch(l6, 3)));
  Loader l7(index, disk);  // a second run reuses the files
  CHECK(same(a, epoch(l7, 3)));
}

TEST_CASE("loader: close_mosaic letterboxes single images instead") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 4);
  auto o = train_options(1);
  o.augment_settings = trainer::core::AugmentConfig{};
  o.augment_settings.translate = 0;
  o.augment_settings.scale = 0;
  o.augment_settings.hsv_h = o.augment_settings.hsv_s = o.augment_settings.hsv_v = 0;
  o.augment_settings.fliplr = 0;
  o.shuffle = false;
  o.batch = 4;
  Loader loader(index, o);
  const auto b = epoch(loader, 0, /*mosaic=*/false);
  // Image 0 is 40x50 -> long side 64: 64 x ceil(51.2) = 52 high; letterboxed into 64x64 with
  // r = 1, top = round(6 - 0.1) = 6; its box (0.5, 0.5, 0.4, 0.6) keeps its centre (0.5, 0.5) and
  // spans 0.4 * 64 = 25.6 px wide, 0.6 * 52 = 31.2 px high -> normalised h 31.2 / 64.
  REQUIRE(b.size() == 1);
  const auto labels = b[0].labels;
  REQUIRE(labels.size(0) >= 1);
  CHECK(labels[0][0].item<float>() == 0);
  CHECK(labels[0][2].item<float>() == doctest::Approx(0.5).epsilon(1e-5));
  CHECK(labels[0][3].item<float>() == doctest::Approx(0.5).epsilon(1e-5));
  CHECK(labels[0][4].item<float>() == doctest::Approx(0.4).epsilon(1e-5));
  CHECK(labels[0][5].item<float>() == doctest::Approx(31.2 / 64).epsilon(1e-5));
  CHECK(b[0].images[0][0][0][0].item<uint8_t>() == 114);  // top padding row
}

TEST_CASE("loader: rect validation batches and their geometry") {
  TempDir dir;
  const DatasetIndex index = three_shapes(dir.path());
  LoaderOptions o;
  o.imgsz = 64;
  o.batch = 2;
  o.workers = 2;
  o.augment = false;
  o.rect = true;
  o.show_progress = false;
  Loader loader(index, o);
  loader.start_epoch(0);
  auto b0 = loader.next();
  auto b1 = loader.next();
  CHECK_FALSE(loader.next());
  REQUIRE(b0);
  REQUIRE(b1);
  // Sorted by h/w: 0.5 (image 1), 1 (image 2) | 2 (image 0). Shapes 96x96 and 96x64.
  CHECK(b0->dataset_indices == std::vector<int64_t>{1, 2});
  CHECK(b0->images.sizes() == torch::IntArrayRef({2, 3, 96, 96}));
  CHECK(b1->images.sizes() == torch::IntArrayRef({1, 3, 96, 64}));
  // Image 1 (100x200) -> long side 64: 64x32; letterboxed into 96x96 without upscaling:
  // left = round(15.9) = 16, top = round(31.9) = 32; gains 64 / 200 = 32 / 100 = 0.32.
  const ImageGeometry& g = b0->geometry[0];
  CHECK(g.original_width == 200);
  CHECK(g.original_height == 100);
  CHECK(g.gain_x == doctest::Approx(0.32));
  CHECK(g.gain_y == doctest::Approx(0.32));
  CHECK(g.pad_x == 16);
  CHECK(g.pad_y == 32);
  // Its box: pixels (16, 8, 48, 24) on 64x32, + (16, 32) -> (32, 40, 64, 56) in 96x96.
  const auto l = b0->labels[0];
  CHECK(l[0].item<float>() == 0);
  CHECK(l[2].item<float>() == doctest::Approx(48.0 / 96));
  CHECK(l[3].item<float>() == doctest::Approx(48.0 / 96));
  CHECK(l[4].item<float>() == doctest::Approx(32.0 / 96));
  CHECK(l[5].item<float>() == doctest::Approx(16.0 / 96));
  // Mapping back: (32 - 16) / 0.32 = 50 = 0.25 * 200, the box's left edge in the original.
  CHECK((32 - g.pad_x) / g.gain_x == doctest::Approx(50));
}

TEST_CASE("loader: sharding gives each rank every world_size-th sample") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 5);
  LoaderOptions o;
  o.imgsz = 32;
  o.batch = 2;
  o.workers = 0;
  o.augment = false;
  o.show_progress = false;
  o.world_size = 2;
  std::vector<int64_t> got[2];
  for (int rank = 0; rank < 2; ++rank) {
    o.rank = rank;
    Loader loader(index, o);
    CHECK(loader.batches_per_epoch() == 2);  // ceil(5 / 2) = 3 samples -> 2 batches
    loader.start_epoch(0);
    while (auto b = loader.next()) {
      got[rank].insert(got[rank].end(), b->dataset_indices.begin(), b->dataset_indices.end());
    }
  }
  CHECK(got[0] == std::vector<int64_t>{0, 2, 4});
  CHECK(got[1] == std::vector<int64_t>{1, 3, 0});  // padded by wrapping
}

TEST_CASE("loader: fill_last_batch completes the last batch with the epoch's first samples") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 5);
  LoaderOptions o;
  o.imgsz = 32;
  o.batch = 2;
  o.workers = 0;
  o.augment = false;
  o.show_progress = false;
  for (const bool shard : {false, true}) {
    CAPTURE(shard);
    o.shard_batches = shard;
    o.fill_last_batch = false;
    std::vector<int64_t> sizes;
    Loader plain(index, o);
    plain.start_epoch(0);
    while (auto b = plain.next()) sizes.push_back(static_cast<int64_t>(b->dataset_indices.size()));
    CHECK(sizes == std::vector<int64_t>{2, 2, 1});
    o.fill_last_batch = true;
    Loader filled(index, o);
    CHECK(filled.batches_per_epoch() == 3);  // as many batches; only the last one changes
    filled.start_epoch(0);
    std::vector<int64_t> got;
    while (auto b = filled.next()) {
      CHECK(b->images.size(0) == 2);
      got.insert(got.end(), b->dataset_indices.begin(), b->dataset_indices.end());
    }
    CHECK(got == std::vector<int64_t>{0, 1, 2, 3, 4, 0});
  }
}

TEST_CASE("loader: shard_batches gives rank r the whole batches r, r + W, ... of the plan") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 7);  // batches of 2: a plan of 4
  LoaderOptions o;
  o.imgsz = 32;
  o.batch = 2;
  o.workers = 1;
  o.augment = false;
  o.rect = true;  // batch shapes from the batch's own images: a moved image would change them
  o.show_progress = false;
  Loader one(index, o);
  one.start_epoch(0);
  std::vector<Batch> plan;
  while (auto b = one.next()) plan.push_back(std::move(*b));
  REQUIRE(plan.size() == 4);
  o.shard_batches = true;
  o.world_size = 3;
  const std::vector<std::vector<int64_t>> expected_ids = {{0, 3}, {1}, {2}};
  for (int rank = 0; rank < 3; ++rank) {
    CAPTURE(rank);
    o.rank = rank;
    Loader loader(index, o);
    CHECK(loader.batches_per_epoch() == static_cast<int64_t>(expected_ids[rank].size()));
    loader.start_epoch(0);
    std::vector<int64_t> ids;
    while (auto b = loader.next()) {
      ids.push_back(b->index);
      const Batch& same = plan.at(static_cast<size_t>(b->index));
      CHECK(b->dataset_indices == same.dataset_indices);  // no padding, nothing moved
      CHECK(torch::equal(b->images, same.images));
      CHECK(torch::equal(b->labels, same.labels));
    }
    CHECK(ids == expected_ids[rank]);
  }
  o.world_size = 5;  // more ranks than batches: the last has none
  o.rank = 4;
  Loader idle(index, o);
  CHECK(idle.batches_per_epoch() == 0);
  idle.start_epoch(0);
  CHECK_FALSE(idle.next());
}

TEST_CASE("loader: a worker's error reaches next() with the file name") {
  // One missing image is replaced (test above); with every image gone nothing can stand in, and
  // the worker's error reaches the caller naming a file and the reason.
  TempDir dir;
  DatasetIndex index = make_index(dir.path(), 4);
  for (const auto& item : index.items) fs::remove(item.image);
  auto o = train_options(2);
  o.shuffle = false;
  o.augment_settings.mosaic = 0;
  Loader loader(index, o);
  loader.start_epoch(0);
  bool thrown = false;
  try {
    while (loader.next()) {
    }
  } catch (const std::exception& e) {
    const std::string what = e.what();
    thrown = what.find("cannot be decoded") != std::string::npos &&
             what.find(".png: image not found or unreadable") != std::string::npos;
  }
  CHECK(thrown);
}

TEST_CASE("loader: the mosaic partner window is min(n, 8 batch, 1000)") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 5);
  auto o = train_options(0);
  CHECK(Loader(index, o).partner_window() == 5);
  o.batch = 1;
  CHECK(Loader(index, o).partner_window() == 5);
}

TEST_CASE("buffer pool: a buffer is reused only after it is released") {
  BufferPool pool(false);
  torch::Tensor a = pool.acquire(2, 4, 4);
  const void* pa = a.data_ptr();
  torch::Tensor b = pool.acquire(2, 4, 4);
  CHECK(b.data_ptr() != pa);
  torch::Tensor view = a.permute({0, 3, 1, 2});
  a = torch::Tensor();
  torch::Tensor c = pool.acquire(1, 4, 4);  // `view` still holds the first buffer
  CHECK(c.data_ptr() != pa);
  view = torch::Tensor();
  torch::Tensor d = pool.acquire(2, 4, 4);
  CHECK(d.data_ptr() == pa);
  CHECK(pool.slots() == 3);
}

TEST_CASE("images_to_device: float in [0, 1], contiguous NCHW, RGB order kept") {
  torch::Tensor nhwc = torch::zeros({1, 2, 2, 3}, torch::kUInt8);
  nhwc.index_put_({0, 0, 1, 0}, 255);  // R at (y 0, x 1)
  nhwc.index_put_({0, 1, 0, 2}, 51);   // B at (y 1, x 0)
  const torch::Tensor out =
      images_to_device(nhwc.permute({0, 3, 1, 2}), torch::Device(torch::kCPU), torch::kFloat32);
  CHECK(out.is_contiguous());
  CHECK(out.sizes() == torch::IntArrayRef({1, 3, 2, 2}));
  CHECK(out[0][0][0][1].item<float>() == 1.0f);
  CHECK(out[0][2][1][0].item<float>() == doctest::Approx(0.2));
  CHECK(out.sum().item<float>() == doctest::Approx(1.2));
}

TEST_CASE("images_to_device: channels_last gives the same values in NHWC strides") {
  const torch::Tensor nhwc = torch::randint(0, 256, {2, 5, 4, 3}, torch::kUInt8);
  const torch::Tensor images = nhwc.permute({0, 3, 1, 2});
  const torch::Device cpu(torch::kCPU);
  const torch::Tensor plain = images_to_device(images, cpu, torch::kFloat32);
  const torch::Tensor cl =
      images_to_device(images, cpu, torch::kFloat32, at::MemoryFormat::ChannelsLast);
  CHECK(cl.is_contiguous(at::MemoryFormat::ChannelsLast));
  CHECK(torch::equal(plain, cl));
}

TEST_CASE("loader options: batches are pinned only for runs that may use CUDA") {
  trainer::core::TrainConfig c;
  c.run.device = "cpu";
  CHECK_FALSE(train_loader_options(c).pin_memory);
  CHECK_FALSE(val_loader_options(c).pin_memory);
  c.run.device = "0";
  CHECK(train_loader_options(c).pin_memory);
  c.run.device = "";  // auto: pinned only where CUDA is available (the loader checks)
  CHECK(val_loader_options(c).pin_memory);
}

TEST_CASE("batch plot: one tile per image, written as a JPEG") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 5);
  Loader loader(index, train_options(1));
  loader.start_epoch(0);
  const auto batch = loader.next();
  REQUIRE(batch);
  const cv::Mat canvas = plot_batch(*batch, index.names);
  CHECK(canvas.rows == 2 * 64);  // 3 images -> a 2x2 grid of 64 px tiles
  CHECK(canvas.cols == 2 * 64);
  save_batch_plot(*batch, index.names, dir / "train_batch0.jpg");
  CHECK(fs::file_size(dir / "train_batch0.jpg") > 1000);
}

TEST_CASE("close_mosaic: mosaic is off once epoch >= epochs - close_mosaic (8.4.190)") {
  trainer::core::TrainConfig c;
  c.schedule.epochs = 20;
  c.schedule.close_mosaic = 10;
  CHECK(mosaic_enabled(c, 0));
  CHECK(mosaic_enabled(c, 9));
  CHECK_FALSE(mosaic_enabled(c, 10));
  CHECK_FALSE(mosaic_enabled(c, 19));
  c.schedule.epochs = 2;  // fewer epochs than close_mosaic: no mosaic at all
  CHECK_FALSE(mosaic_enabled(c, 0));
  CHECK_FALSE(mosaic_enabled(c, 1));
  c.schedule.close_mosaic = 0;  // 0 never closes it
  CHECK(mosaic_enabled(c, 1));
  // `time` re-estimates the epochs: close_mosaic counts back from that number.
  c.schedule.epochs = 20;
  c.schedule.close_mosaic = 10;
  CHECK_FALSE(mosaic_enabled(c, 12));
  CHECK(mosaic_enabled(c, 12, 30));
  CHECK_FALSE(mosaic_enabled(c, 20, 30));
  c.data.rect = true;  // rect training never uses mosaic
  CHECK_FALSE(mosaic_enabled(c, 0));
}

TEST_CASE("loader: rect training batches in aspect order, each warped to its unpadded shape") {
  TempDir dir;
  const DatasetIndex index = three_shapes(dir.path());
  trainer::core::TrainConfig config;
  config.data.imgsz = 64;
  config.data.batch = 2;
  config.data.workers = 1;
  config.data.rect = true;
  config.run.device = "cpu";
  LoaderOptions o = train_loader_options(config);
  o.show_progress = false;
  CHECK(o.rect);
  CHECK_FALSE(o.shuffle);
  CHECK(o.rect_pad == 0.0);
  Loader loader(index, o);
  // mosaic=true is asked for but rect keeps it off. Sorted by h/w: 0.5 (1), 1 (2) | 2 (0).
  // Shapes with pad 0: [1, 1] * 64 -> 64x64; h/w 2 -> (64, ceil(0.5 * 64 / 32) * 32) = 64x32.
  const auto e0 = epoch(loader, 0, true);
  const auto e1 = epoch(loader, 1, true);
  REQUIRE(e0.size() == 2);
  CHECK(e0[0].dataset_indices == std::vector<int64_t>{1, 2});
  CHECK(e0[1].dataset_indices == std::vector<int64_t>{0});
  CHECK(e0[0].images.sizes() == torch::IntArrayRef({2, 3, 64, 64}));
  CHECK(e0[1].images.sizes() == torch::IntArrayRef({1, 3, 64, 32}));
  REQUIRE(e1.size() == 2);
  CHECK(e1[0].dataset_indices == e0[0].dataset_indices);  // no shuffle between epochs
  CHECK(e1[1].dataset_indices == e0[1].dataset_indices);
  for (const auto& b : e0) {
    if (b.labels.size(0) == 0) continue;
    const auto xywh = b.labels.slice(1, 2, 6);
    CHECK(xywh.min().item<float>() >= 0.0f);
    CHECK(xywh.max().item<float>() <= 1.0f);
  }
}

TEST_CASE("loader: an image that became unreadable is replaced in its batch, logged once") {
  TempDir dir;
  const DatasetIndex index = make_index(dir.path(), 4);
  // After indexing, image 2 is overwritten with garbage (a changed file, a bad sector).
  trainer::test::write_text(index.items[2].image, "not an image any more");
  auto train = train_options(1);
  train.batch = 4;
  Loader loader(index, train);
  const auto batches = epoch(loader, 0);
  REQUIRE(batches.size() == 1);
  CHECK(batches[0].images.size(0) == 4);
  CHECK(loader.unreadable_images() == 1);
  epoch(loader, 1);
  CHECK(loader.unreadable_images() == 1);  // the same file is not reported again
  // Validation: the replacement's own index and geometry are recorded (never image 2's).
  LoaderOptions val;
  val.imgsz = 64;
  val.batch = 4;
  val.workers = 0;
  val.augment = false;
  val.rect = false;
  val.shuffle = false;
  Loader val_loader(index, val);
  val_loader.start_epoch(0, false);
  auto b = val_loader.next();
  REQUIRE(b);
  CHECK(std::count(b->dataset_indices.begin(), b->dataset_indices.end(), 2) == 0);
  CHECK(std::count(b->dataset_indices.begin(), b->dataset_indices.end(), 3) == 2);
  // The RAM cache leaves it out instead of failing, and the loader replaces it the same way.
  auto cached = train_options(1);
  cached.batch = 4;
  cached.cache = trainer::core::CacheMode::kRam;
  Loader cached_loader(index, cached);
  CHECK(epoch(cached_loader, 0).size() == 1);
  CHECK(cached_loader.unreadable_images() == 1);
  // Every image unreadable: a clear error naming a file.
  for (const auto& item : index.items) trainer::test::write_text(item.image, "junk");
  Loader broken(index, train_options(0));
  broken.start_epoch(0, true);
  CHECK_THROWS_WITH_AS(broken.next(), doctest::Contains("cannot be decoded"),
                       trainer::core::InputError);
}
