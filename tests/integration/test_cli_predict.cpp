// `trainer predict` end to end with the built binary on a tiny model fitted for one epoch: every
// source kind (image, folder, glob, .txt, video), the run folder increment, labels/*.txt rows,
// predictions.json, skipped and bad sources, pose output, segmentation masks, sources of one name
// and a run folder that holds the sources.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <filesystem>
#include <set>
#include <sstream>

#include "coco8_seg_subset.h"
#include "test_support.h"

using trainer::test::run_command;
namespace fs = std::filesystem;

namespace {

std::string trainer_binary() {
  return TRAINER_BINARY;
}

// Lines of a text file split into whitespace-separated fields.
std::vector<std::vector<std::string>> rows_of(const fs::path& file) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(trainer::test::read_text(file));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> row;
    std::string f;
    while (fields >> f) row.push_back(f);
    out.push_back(row);
  }
  return out;
}

size_t count_files(const fs::path& dir, const std::string& suffix) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == suffix;
  return n;
}

// A synthetic set and a one-epoch fit on it; returns the fit's best.pt.
fs::path fit_tiny(const fs::path& dir, const std::string& task_args, const std::string& model,
                  int size) {
  std::string out;
  const auto data = dir / "data";
  REQUIRE(run_command(trainer_binary() + " -q synth " + data.string() + task_args +
                          " --train 4 --val 4 --size " + std::to_string(size) + " --max-objects 2",
                      &out) == 0);
  const std::string yaml = (data / (task_args.empty() ? "synthetic.yaml" : "pose.yaml")).string();
  REQUIRE(run_command(trainer_binary() + " -q fit data=" + yaml + " model=" + model +
                          " imgsz=" + std::to_string(size) +
                          " batch=4 nbs=4 workers=1 precision=fp32 device=cpu plots=false "
                          "val=false epochs=1 project=" +
                          dir.string() + " name=fit",
                      &out) == 0);
  const auto weights = dir / "fit" / "weights" / "last.pt";
  REQUIRE(fs::exists(weights));
  return weights;
}

}  // namespace

TEST_CASE("cli predict: image, folder, glob, txt and video sources with their outputs") {
  trainer::test::TempDir dir;
  const auto weights = fit_tiny(dir.path(), "", "yolo26t", 96);
  const auto images = dir / "data" / "images" / "val";
  REQUIRE(fs::exists(images));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(images)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 4);
  const std::string common =
      trainer_binary() + " predict weights=" + weights.string() +
      " imgsz=96 device=cpu conf=0.0 max_det=3 project=" + dir.path().string();
  std::string out;

  // One image: annotated copy under the same name, the reference's lines.
  REQUIRE(run_command(common + " source=" + files[0].string(), &out) == 0);
  CHECK(out.find("image 1/1 " + files[0].string() + ": 96x96 ") != std::string::npos);
  CHECK(out.find("Speed: ") != std::string::npos);
  CHECK(out.find("per image at shape (1, 3, 96, 96)") != std::string::npos);
  CHECK(out.find("Results saved to " + (dir / "predict").string()) != std::string::npos);
  CHECK(fs::exists(dir / "predict" / files[0].filename()));
  CHECK(cv::imread((dir / "predict" / files[0].filename()).string()).cols == 96);

  // Again: the next run folder. A folder in batches of 3 with labels and json.
  REQUIRE(run_command(common + " source=" + images.string() +
                          " batch=3 save_txt=true save_conf=true save_json=true",
                      &out) == 0);
  const auto run2 = dir / "predict2";
  CHECK(out.find("image 4/4 ") != std::string::npos);
  CHECK(out.find("4 labels saved to " + (run2 / "labels").string()) != std::string::npos);
  CHECK(count_files(run2, ".jpg") + count_files(run2, ".png") == 4);
  REQUIRE(count_files(run2 / "labels", ".txt") == 4);
  const auto rows = rows_of(run2 / "labels" / (files[1].stem().string() + ".txt"));
  REQUIRE(rows.size() == 3);  // max_det
  for (const auto& row : rows) {
    REQUIRE(row.size() == 6);  // class xc yc w h conf
    for (size_t k = 1; k < 5; ++k) {
      CHECK(std::stod(row[k]) >= 0.0);
      CHECK(std::stod(row[k]) <= 1.0);
    }
  }
  CHECK(trainer::test::read_text(run2 / "predictions.json").find("\"category_id\"") !=
        std::string::npos);

  // A glob and a .txt list (relative to its folder), without saving images.
  REQUIRE(run_command(common + " save=false source='" + (images / "*").string() + "'", &out) == 0);
  CHECK(out.find("image 4/4 ") != std::string::npos);
  trainer::test::write_text(dir / "list.txt", "data/images/val/" + files[2].filename().string() +
                                                  "\n" + files[3].string() + "\n");
  REQUIRE(run_command(common + " save=false source=" + (dir / "list.txt").string(), &out) == 0);
  CHECK(out.find("image 2/2 " + files[3].string()) != std::string::npos);

  // A video of 5 frames, every second one kept: an annotated mp4 and per-frame labels.
  const auto video = dir / "clip.avi";
  {
    cv::VideoWriter writer(video.string(), cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 10,
                           cv::Size(96, 64));
    REQUIRE(writer.isOpened());
    const cv::Mat frame = cv::imread(files[0].string());
    cv::Mat small;
    cv::resize(frame, small, cv::Size(96, 64));
    for (int i = 0; i < 5; ++i) writer.write(small);
  }
  REQUIRE(run_command(common + " vid_stride=2 save_txt=true save_json=true name=video source=" +
                          video.string(),
                      &out) == 0);
  CHECK(out.find("video 1/1 (frame 1/5) ") != std::string::npos);
  CHECK(out.find("video 1/1 (frame 5/5) ") != std::string::npos);
  CHECK(out.find("(frame 2/5)") == std::string::npos);
  CHECK(out.find(": 64x96 ") != std::string::npos);
  CHECK(fs::file_size(dir / "video" / "clip.mp4") > 0);
  CHECK(fs::exists(dir / "video" / "labels" / "clip_3.txt"));
  CHECK_FALSE(fs::exists(dir / "video" / "clip.partial.mp4"));  // renamed once complete
  // One numbering: predictions.json's frames are the labels' frames 1, 3, 5, named as they are.
  const auto json = nlohmann::json::parse(trainer::test::read_text(dir / "video/predictions.json"));
  std::set<std::pair<int64_t, std::string>> frames;
  for (const auto& entry : json)
    frames.emplace(entry.at("image_id").get<int64_t>(), entry.at("file_name").get<std::string>());
  for (const auto& [id, name] : frames) {
    CAPTURE(id);
    CHECK(name == "clip_" + std::to_string(id));
    CHECK(fs::exists(dir / "video" / "labels" / (name + ".txt")));
  }
  CHECK(frames.size() == 3);
}

TEST_CASE("cli predict: bad sources, unreadable images and unknown keys") {
  trainer::test::TempDir dir;
  const auto weights = fit_tiny(dir.path(), "", "yolo26t", 64);
  const std::string common = trainer_binary() + " predict weights=" + weights.string() +
                             " imgsz=64 device=cpu project=" + dir.path().string();
  std::string out;
  CHECK(run_command(common + " source=" + (dir / "missing.jpg").string(), &out) == 2);
  CHECK(out.find("missing.jpg: no such file or folder") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "predict"));  // nothing written
  CHECK(run_command(common + " source=x.jpg confidence=0.3", &out) == 2);
  CHECK(out.find("unknown key 'confidence'") != std::string::npos);
  CHECK(run_command(
            trainer_binary() + " predict source=x.jpg weights=" + (dir / "nothing.pt").string(),
            &out) == 2);

  // A corrupt image among good ones is skipped with a warning naming it; alone it is an error.
  fs::create_directories(dir / "mixed");
  fs::copy_file(dir / "data" / "images" / "val" /
                    fs::directory_iterator(dir / "data" / "images" / "val")->path().filename(),
                dir / "mixed" / "a.jpg");
  trainer::test::write_text(dir / "mixed" / "b.jpg", "not a jpeg");
  REQUIRE(run_command(common + " source=" + (dir / "mixed").string(), &out) == 0);
  CHECK(out.find("skipping " + (dir / "mixed" / "b.jpg").string()) != std::string::npos);
  CHECK(out.find("image 1/2 ") != std::string::npos);
  CHECK(run_command(common + " source=" + (dir / "mixed" / "b.jpg").string(), &out) == 2);
  CHECK(out.find("b.jpg") != std::string::npos);
}

TEST_CASE("cli predict: a pose model writes keypoints in its labels") {
  trainer::test::TempDir dir;
  const auto weights = fit_tiny(dir.path(), " --task pose", "yolo26t-pose", 96);
  // The checkpoint names the model and data too.
  const auto ckpt = dir / "fit" / "weights" / "last.ckpt";
  REQUIRE(fs::exists(ckpt));
  std::string out;
  REQUIRE(run_command(trainer_binary() + " predict weights=" + ckpt.string() +
                          " source=" + (dir / "data" / "images" / "val").string() +
                          " imgsz=96 device=cpu conf=0.0 max_det=2 save_txt=true project=" +
                          dir.path().string(),
                      &out) == 0);
  const auto labels = dir / "predict" / "labels";
  REQUIRE(fs::exists(labels));
  const auto first = *fs::directory_iterator(labels);
  const auto rows = rows_of(first.path());
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].size() == 5 + 7 * 3);  // class, box, 7 keypoints x (x, y, conf)
  CHECK(count_files(dir / "predict", ".jpg") + count_files(dir / "predict", ".png") == 4);
}

TEST_CASE("cli predict: a segmentation model writes masks as RLE in predictions.json") {
  TRAINER_SKIP_IF_NO_SHARED_DATA(coco128, "coco128");
  trainer::test::TempDir dir;
  const auto yaml = trainer::test::write_coco8_seg_subset(*coco128, dir / "coco8_seg");
  std::string out;
  REQUIRE(run_command(trainer_binary() + " -q fit data=" + yaml.string() +
                          " model=yolo26t-seg imgsz=96 batch=4 nbs=4 workers=1 precision=fp32 "
                          "device=cpu plots=false val=false epochs=1 project=" +
                          dir.path().string() + " name=fit",
                      &out) == 0);
  const auto weights = dir / "fit" / "weights" / "last.pt";
  REQUIRE(run_command(trainer_binary() + " predict weights=" + weights.string() + " source=" +
                          (*coco128 / "images" / "train2017" / "000000000009.jpg").string() +
                          " imgsz=96 device=cpu conf=0.0 max_det=3 save_json=true project=" +
                          dir.path().string(),
                      &out) == 0);
  const std::string json = trainer::test::read_text(dir / "predict" / "predictions.json");
  size_t entries = 0, masks = 0;
  for (size_t at = json.find("\"image_id\""); at != std::string::npos;
       at = json.find("\"image_id\"", at + 1)) {
    ++entries;
  }
  for (size_t at = json.find("\"segmentation\": {\"size\": [480, 640]"); at != std::string::npos;
       at = json.find("\"segmentation\": {\"size\": [480, 640]", at + 1)) {
    ++masks;
  }
  // Up to max_det detections (those with an empty mask are dropped, as the reference's
  // predictor drops them), each with its mask at the original 640 x 480.
  CHECK(entries >= 1);
  CHECK(entries <= 3);
  CHECK(masks == entries);
}

TEST_CASE("cli predict: sources of one name keep every output, a source is never written over") {
  trainer::test::TempDir dir;
  const auto weights = fit_tiny(dir.path(), "", "yolo26t", 64);
  const auto images = dir / "data" / "images" / "val";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(images)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 4);
  // Two folders with an image of one name (different pictures), listed in a .txt.
  for (const char* folder : {"a", "b"}) fs::create_directories(dir / folder);
  fs::copy_file(files[0], dir / "a" / "img.jpg");
  fs::copy_file(files[1], dir / "b" / "img.jpg");
  trainer::test::write_text(dir / "list.txt", "a/img.jpg\nb/img.jpg\n");
  const std::string common =
      trainer_binary() + " predict weights=" + weights.string() +
      " imgsz=64 device=cpu conf=0.0 max_det=2 project=" + dir.path().string();
  std::string out;
  REQUIRE(
      run_command(common + " save_txt=true save_json=true source=" + (dir / "list.txt").string(),
                  &out) == 0);
  const auto run = dir / "predict";
  CHECK(fs::exists(run / "img.jpg"));
  CHECK(fs::exists(run / "img_2.jpg"));
  CHECK(fs::exists(run / "labels" / "img.txt"));
  CHECK(fs::exists(run / "labels" / "img_2.txt"));
  CHECK(out.find("2 labels saved") != std::string::npos);

  // exist_ok=true with the source folder as the run folder: refused, the original untouched.
  const std::string original = trainer::test::read_text(dir / "a" / "img.jpg");
  CHECK(run_command(common + " name=a exist_ok=true source=" + (dir / "a").string(), &out) == 2);
  CHECK(out.find("over the source " + (dir / "a" / "img.jpg").string()) != std::string::npos);
  CHECK(trainer::test::read_text(dir / "a" / "img.jpg") == original);
  CHECK(std::distance(fs::directory_iterator(dir / "a"), fs::directory_iterator{}) == 1);
  // Labels only (save=false) touch no source: they go to a/labels/.
  REQUIRE(run_command(common + " name=a exist_ok=true save=false save_txt=true source=" +
                          (dir / "a").string(),
                      &out) == 0);
  CHECK(fs::exists(dir / "a" / "labels" / "img.txt"));
  CHECK(trainer::test::read_text(dir / "a" / "img.jpg") == original);
}
