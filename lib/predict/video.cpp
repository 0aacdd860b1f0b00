// See video.h.
#include "predict/video.h"

#include <algorithm>
#include <stdexcept>

#include "core/error.h"

#ifdef TRAINER_HAVE_VIDEOIO
#include <opencv2/videoio.hpp>
#endif

namespace trainer::predict {

#ifdef TRAINER_HAVE_VIDEOIO
struct VideoReader::Impl {
  cv::VideoCapture capture;
};
struct VideoWriter::Impl {
  cv::VideoWriter writer;
};

bool video_supported() {
  return true;
}

VideoReader::VideoReader(const std::filesystem::path& file, int64_t stride)
    : impl_(std::make_unique<Impl>()), stride_(std::max<int64_t>(stride, 1)) {
  if (!impl_->capture.open(file.string()) || !impl_->capture.isOpened()) {
    throw core::InputError(file.string() + ": cannot open the video");
  }
  count_ = static_cast<int64_t>(impl_->capture.get(cv::CAP_PROP_FRAME_COUNT));
  const double fps = impl_->capture.get(cv::CAP_PROP_FPS);
  if (fps > 0 && fps < 1000) fps_ = fps;
}

bool VideoReader::next(cv::Mat& frame) {
  for (int64_t skip = 1; skip < stride_ && frame_ > 0; ++skip) {
    if (!impl_->capture.grab()) return false;
    ++frame_;
  }
  if (!impl_->capture.read(frame) || frame.empty()) return false;
  ++frame_;
  return true;
}

VideoWriter::VideoWriter(const std::filesystem::path& file, double fps)
    : impl_(std::make_unique<Impl>()), file_(file), fps_(fps) {}

void VideoWriter::write(const cv::Mat& frame) {
  if (!impl_->writer.isOpened()) {
    if (!impl_->writer.open(temporary_path(file_).string(),
                            cv::VideoWriter::fourcc('m', 'p', '4', 'v'), fps_, frame.size())) {
      throw std::runtime_error(file_.string() + ": cannot write the video");
    }
  }
  impl_->writer.write(frame);
}

void VideoWriter::finish() {
  if (finished_ || !impl_->writer.isOpened()) return;
  impl_->writer.release();
  finished_ = true;
  std::error_code ec;
  std::filesystem::rename(temporary_path(file_), file_, ec);
  if (ec) throw std::runtime_error(file_.string() + ": cannot write the video: " + ec.message());
}

VideoWriter::~VideoWriter() {
  if (finished_ || !impl_->writer.isOpened()) return;
  impl_->writer.release();
  std::error_code ec;
  std::filesystem::remove(temporary_path(file_), ec);
}
#else
struct VideoReader::Impl {};
struct VideoWriter::Impl {};

bool video_supported() {
  return false;
}

VideoReader::VideoReader(const std::filesystem::path& file, int64_t stride) : stride_(stride) {
  throw core::InputError(file.string() +
                         ": this trainer was built without OpenCV videoio; videos are not read");
}

bool VideoReader::next(cv::Mat&) {
  return false;
}

VideoWriter::VideoWriter(const std::filesystem::path& file, double fps) : file_(file), fps_(fps) {}

void VideoWriter::write(const cv::Mat&) {}

void VideoWriter::finish() {}

VideoWriter::~VideoWriter() = default;
#endif

std::filesystem::path VideoWriter::temporary_path(const std::filesystem::path& file) {
  return file.parent_path() / (file.stem().string() + ".partial" + file.extension().string());
}

VideoReader::~VideoReader() = default;

}  // namespace trainer::predict
