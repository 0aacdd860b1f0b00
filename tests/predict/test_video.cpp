// The annotated video's name: written under a temporary name and renamed only when complete.
#include <doctest/doctest.h>
#include <opencv2/core.hpp>

#include <filesystem>

#include "predict/video.h"
#include "test_support.h"

namespace fs = std::filesystem;
using trainer::predict::VideoWriter;

TEST_CASE("video writer: the final name only once finished, nothing left when given up") {
  CHECK(VideoWriter::temporary_path("/r/clip.mp4") == fs::path("/r/clip.partial.mp4"));
  if (!trainer::predict::video_supported()) {
    MESSAGE("built without OpenCV videoio: no video is written");
    return;
  }
  trainer::test::TempDir dir;
  const cv::Mat frame(64, 96, CV_8UC3, cv::Scalar(40, 120, 200));
  const fs::path done = dir / "done.mp4";
  {
    VideoWriter writer(done, 10);
    writer.write(frame);
    writer.write(frame);
    CHECK(fs::exists(VideoWriter::temporary_path(done)));
    CHECK_FALSE(fs::exists(done));  // a video cut short here never takes the final name
    writer.finish();
  }
  CHECK(fs::file_size(done) > 0);
  CHECK_FALSE(fs::exists(VideoWriter::temporary_path(done)));

  const fs::path abandoned = dir / "abandoned.mp4";
  {
    VideoWriter writer(abandoned, 10);
    writer.write(frame);
  }  // an error before finish(): the partial video is removed
  CHECK_FALSE(fs::exists(abandoned));
  CHECK_FALSE(fs::exists(VideoWriter::temporary_path(abandoned)));

  VideoWriter empty(dir / "empty.mp4", 10);
  empty.finish();  // no frame: nothing written
  CHECK_FALSE(fs::exists(dir / "empty.mp4"));
}
