// `trainer data check`, `trainer data preview` and `trainer bench data` end to end on a small
// generated dataset: printed summaries and problems, exit status, the files written, the JSON;
// `data check` and `fit` on the generated bad-input corpus.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "bad_input_corpus.h"
#include "data_test_util.h"

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
