// See library_logs.h.
// Tested by tests/app/test_bad_input_cli.cpp: predict on a text file named .mp4 prints one error
//   line and no OpenCV/GStreamer library text.
#include "core/library_logs.h"

#include <opencv2/core/utils/logger.hpp>

#include <cstdlib>

namespace trainer::core {

void set_library_log_levels(bool verbose) {
  // A video OpenCV cannot open is our error (the file named, exit 2); what each backend tried
  // (GStreamer's assertion, FFmpeg's "moov atom not found") is for -v.
  cv::utils::logging::setLogLevel(verbose ? cv::utils::logging::LOG_LEVEL_INFO
                                          : cv::utils::logging::LOG_LEVEL_SILENT);
  // OpenCV reads this when it first opens a video with FFmpeg: -8 is FFmpeg's AV_LOG_QUIET, 16
  // its AV_LOG_ERROR. A value the user set is kept.
  setenv("OPENCV_FFMPEG_LOGLEVEL", verbose ? "16" : "-8", /*overwrite=*/0);
}

}  // namespace trainer::core
