// `trainer data check`, `trainer data preview` and `trainer bench data` end to end on a small
// generated dataset: printed summaries and problems, exit status, the files written, the JSON;
// `data check` and `fit` on the generated bad-input corpus; `data check` of huge-header PNGs under
// an address-space limit.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#if defined(TRAINER_HAS_ZLIB)
#include <zlib.h>
#endif

#include "bad_input_corpus.h"
#include "data_test_util.h"
#include "png_bytes.h"

using trainer::test::run_command;
using trainer::test::TempDir;
using trainer::test::write_text;

namespace {

const std::string kTrainer = TRAINER_BINARY;

// data.yaml with 3 train images (one with a bad label line) and 1 val image.
void write_dataset(const TempDir& dir) {
  for (int i = 0; i < 3; ++i) {
    trainer::test::write_image(dir / ("images/train/t" + std::to_string(i) + ".jpg"),
                               trainer::test::pattern_image(60, 80, i));
  }
  trainer::test::write_image(dir / "images/val/v0.jpg", trainer::test::pattern_image(80, 60));
  write_text(dir / "labels/train/t0.txt", "0 0.5 0.5 0.4 0.4\n");
  write_text(dir / "labels/train/t1.txt", "1 0.5 0.5 0.4 0.4\n1 0.2 0.2\n");
  write_text(dir / "labels/val/v0.txt", "1 0.5 0.5 0.2 0.2\n");
  write_text(dir / "data.yaml", "path: .\ntrain: images/train\nval: images/val\nnames: [a, b]\n");
}

}  // namespace

TEST_CASE("trainer data check prints each split's summary and every problem") {
  TempDir dir;
  write_dataset(dir);
  std::string out;
  REQUIRE(run_command(kTrainer + " data check " + (dir / "data.yaml").string(), &out) == 0);
  CHECK(out.find("train (" + (dir / "images/train").string() +
                 "): 2 images, 1 backgrounds, 1 corrupt, 1 boxes") != std::string::npos);
  CHECK(out.find("  " + (dir / "labels/train/t1.txt").string() +
                 ":2: expected 5 values (class cx cy w h), got 3 (image skipped)") !=
        std::string::npos);
  CHECK(out.find("val (" + (dir / "images/val").string() + "): 1 images, 0 backgrounds") !=
        std::string::npos);
  // Nothing usable: exit status 2 with the reason.
  write_text(dir / "labels/val/v0.txt", "7 0.5 0.5 0.2 0.2\n");
  REQUIRE(run_command(kTrainer + " data check " + (dir / "data.yaml").string(), &out) == 2);
  CHECK(out.find("val: error: ") != std::string::npos);
  CHECK(out.find("no usable images in the val split") != std::string::npos);
}

TEST_CASE("trainer data preview writes train_batch0.jpg into the run folder") {
  TempDir dir;
  write_dataset(dir);
  write_text(dir / "cfg.yaml", "data: data.yaml\nimgsz: 64\nbatch: 2\nworkers: 1\n");
  std::string out;
  REQUIRE(run_command(kTrainer + " data preview " + (dir / "cfg.yaml").string() +
                          " project=" + (dir / "runs").string() + " name=p --batches 2",
                      &out) == 0);
  CHECK(std::filesystem::file_size(dir / "runs/p/train_batch0.jpg") > 500);
  CHECK(std::filesystem::exists(dir / "runs/p/train_batch1.jpg"));
  CHECK(out.find("mosaic") != std::string::npos);
}

TEST_CASE("trainer bench data prints JSON per image size and worker count") {
  TempDir dir;
  write_dataset(dir);
  std::string out;
  REQUIRE(run_command(kTrainer + " -q bench data --data " + (dir / "data.yaml").string() +
                          " --imgsz 64,32 --workers 1 --batch 2 --epochs 2 --cache ram,disk > " +
                          (dir / "bench.json").string(),
                      &out) == 0);
  const auto j = nlohmann::json::parse(trainer::test::read_text(dir / "bench.json"));
  CHECK(j.at("bench") == "data");
  REQUIRE(j.at("runs").size() == 4);  // cache modes x image sizes
  CHECK(j.at("runs").at(1).at("imgsz") == 32);
  CHECK(j.at("runs").at(0).at("store") == "ram-decoded");
  CHECK(j.at("runs").at(2).at("store") == "disk");
  CHECK(j.at("runs").at(0).at("cache_ram_bytes").get<int64_t>() > 0);
  CHECK(j.at("runs").at(0).at("peak_rss_bytes").get<int64_t>() > 0);
  // Where the time went: warp and collation run for every image; the RAM cache decodes nothing.
  const auto& stages = j.at("runs").at(0).at("stages");
  CHECK(stages.at("warp").at("ms_per_image").get<double>() > 0);
  CHECK(stages.at("collate").at("calls").get<int64_t>() == 2);
  CHECK_FALSE(stages.contains("decode"));
  // Without decoded images in RAM, mosaic partners come from the recently decoded images.
  CHECK(j.at("runs").at(2).at("recent_images").at("hit_rate").get<double>() > 0.5);
  CHECK(j.at("runs").at(0).at("images_per_epoch") == 2);
  CHECK(j.at("runs").at(0).at("images_per_s_median").get<double>() > 0);
  CHECK(j.at("runs").at(0).at("images_per_s").size() == 2);
}

TEST_CASE("trainer data check names every problem of the bad-input corpus with its file") {
  TempDir dir;
  const auto corpus = trainer::test::make_bad_input_corpus(dir.path());
  std::string out;
  // The test split is empty: exit status 2, after the other splits were reported in full.
  CHECK(run_command(kTrainer + " data check --no-cache " + corpus.data_yaml.string(), &out) == 2);
  INFO(out);
  CHECK(out.find("train (" + (dir / "images/train").string() +
                 "): " + std::to_string(corpus.usable_train_images) + " images, 1 backgrounds, " +
                 std::to_string(corpus.corrupt_train_images) + " corrupt") != std::string::npos);
  for (const auto& expected : corpus.train_problems) {
    const auto at = out.find("  " + expected.file.string() + ":");
    REQUIRE(at != std::string::npos);
    CHECK(out.substr(at, out.find('\n', at) - at).find(expected.reason) != std::string::npos);
  }
  CHECK(out.find("val (") != std::string::npos);
  CHECK(out.find("test: error: " + (dir / "images/empty").string() + ": no images found") !=
        std::string::npos);
  for (const auto& broken : corpus.broken_datasets) {
    CHECK(run_command(kTrainer + " data check " + broken.yaml.string(), &out) == 2);
    CHECK(out.find(broken.culprit.string()) != std::string::npos);
    CHECK(out.find(broken.reason) != std::string::npos);
  }
}

TEST_CASE(
    "trainer fit trains on the good part of the bad-input corpus, stops clearly without one") {
  TempDir dir;
  const auto corpus = trainer::test::make_bad_input_corpus(dir.path());
  const std::string common =
      " model=yolo26t imgsz=64 batch=4 nbs=4 workers=1 epochs=1 precision=fp32 device=cpu "
      "plots=false project=" +
      dir.path().string();
  std::string out;
  REQUIRE(
      run_command(kTrainer + " -q fit data=" + corpus.data_yaml.string() + common + " name=good",
                  &out) == 0);
  CHECK(std::filesystem::exists(dir / "good/weights/last.ckpt"));
  CHECK(run_command(
            kTrainer + " fit data=" + corpus.all_corrupt_yaml.string() + common + " name=none",
            &out) == 2);
  CHECK(out.find("no usable images in the train split") != std::string::npos);
  CHECK(out.find((dir / "images/corrupt_only/zero.jpg").string() + ": skipped: empty image file") !=
        std::string::npos);
}

#if defined(TRAINER_HAS_ZLIB)
namespace {

// A valid PNG of width x height black RGB pixels; the zero rows deflate about 200:1 at zlib's
// fastest level, so a 16384 x 16384 one (768 MiB decoded) is a 3.5 MB file.
std::string black_png(uint32_t width, uint32_t height) {
  const std::string row(1 + size_t(width) * 3, '\0');  // filter byte, then the samples
  z_stream z{};
  REQUIRE(deflateInit(&z, Z_BEST_SPEED) == Z_OK);
  std::string out;
  std::string buffer(1 << 16, '\0');
  for (uint32_t y = 0; y <= height; ++y) {
    const bool last = y == height;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(row.data()));
    z.avail_in = last ? 0 : static_cast<uInt>(row.size());
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer.data());
      z.avail_out = static_cast<uInt>(buffer.size());
      deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
      out.append(buffer.data(), buffer.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  using namespace trainer::test;
  return png_signature() + png_chunk("IHDR", png_ihdr(width, height, 8)) + png_chunk("IDAT", out) +
         png_chunk("IEND", "");
}

}  // namespace

TEST_CASE("trainer data check decodes huge PNGs one at a time within a memory limit (slow)") {
  TempDir dir;
  // Five small PNGs, and four valid 16384 x 16384 PNGs (768 MiB each once decoded, about 2 s of
  // decoding each) beside one small one: the same number of files, so the same verification
  // threads.
  for (int i = 0; i < 5; ++i) {
    trainer::test::write_image(dir / ("images/small/s" + std::to_string(i) + ".png"),
                               trainer::test::pattern_image(20, 20, i));
  }
  trainer::test::write_image(dir / "images/huge/ok.png", trainer::test::pattern_image(20, 20));
  const std::string huge = black_png(16384, 16384);
  for (int i = 0; i < 4; ++i)
    write_text(dir / ("images/huge/h" + std::to_string(i) + ".png"), huge);
  for (const std::string name : {"small", "huge"}) {
    write_text(dir / (name + ".yaml"),
               "path: .\ntrain: images/" + name + "\nval: images/small\nnames: [a]\n");
  }
  // `trainer data check` with its address space limited to `kib` KiB (one malloc arena per
  // thread would reserve 64 MiB each, so two arenas).
  auto check = [&](const std::string& name, int64_t kib, std::string* out) {
    return run_command("export MALLOC_ARENA_MAX=2; ulimit -v " + std::to_string(kib) + "; " +
                           kTrainer + " data check --no-cache " + (dir / (name + ".yaml")).string(),
                       out);
  };
  // The smallest limit, to 64 MiB, under which the small set checks.
  std::string out;
  int64_t lo = 64 << 10, hi = int64_t{64} << 20;
  REQUIRE(check("small", hi, &out) == 0);
  while (hi - lo > (64 << 10)) {
    const int64_t mid = (lo + hi) / 2;
    (check("small", mid, &out) == 0 ? hi : lo) = mid;
  }
  // 1.25 GiB more holds one huge image (768 MiB) with room for the decoder's buffers, but not two
  // at once: each is decoded alone and verified usable, and the command completes.
  const int status = check("huge", hi + (int64_t{5} << 18), &out);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("train (" + (dir / "images/huge").string() +
                 "): 5 images, 5 backgrounds, 0 corrupt") != std::string::npos);
  CHECK(out.find("alloc") == std::string::npos);
}
#endif
