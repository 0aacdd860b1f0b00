// Reading video frames and writing an annotated video (OpenCV videoio).
//
// Why apart: videoio is optional (the GPU bundle's OpenCV has no video codecs); without it
// (TRAINER_HAVE_VIDEOIO unset) a video source is a clear error and images still work.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <memory>

namespace trainer::predict {

// Whether this build reads and writes videos.
bool video_supported();

class VideoReader {
 public:
  // Every `stride`-th frame of `file`. Throws core::InputError naming the file when it cannot be
  // opened.
  VideoReader(const std::filesystem::path& file, int64_t stride);
  ~VideoReader();
  // The next kept frame (BGR); false at the end.
  bool next(cv::Mat& frame);
  int64_t frame_index() const { return frame_; }  // 1-based index of the last frame returned
  int64_t frame_count() const { return count_; }  // as the container reports it (0: unknown)
  double fps() const { return fps_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t stride_;
  int64_t frame_ = 0;
  int64_t count_ = 0;
  double fps_ = 30;
};

// An mp4 (mp4v) at `fps`; frames must all have the first frame's size. The frames go to
// temporary_path(file) (the container follows the suffix, so it keeps `.mp4`) and finish() renames
// it to `file`: a video cut short (an error, a full disk) never takes the final name, and one
// given up without finish() is removed.
class VideoWriter {
 public:
  VideoWriter(const std::filesystem::path& file, double fps);
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;
  void write(const cv::Mat& frame);
  // Closes the video and gives it its name (nothing when no frame was written). Throws
  // std::runtime_error when the rename fails.
  void finish();

  // clip.mp4 -> clip.partial.mp4
  static std::filesystem::path temporary_path(const std::filesystem::path& file);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::filesystem::path file_;
  double fps_;
  bool finished_ = false;
};

}  // namespace trainer::predict
