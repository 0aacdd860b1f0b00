// The libraries' own console output, quiet unless -v asks for it.
//
// Why: OpenCV prints its warnings straight to the console (a text file named .mp4 gives a
// multi-line GStreamer assertion before our one error line). What we report names the file and
// what to do; the library's text is for -v.
#pragma once

namespace trainer::core {

// OpenCV's and its FFmpeg backend's console output: shown only when `verbose`. Call before the
// first video is opened.
void set_library_log_levels(bool verbose);

}  // namespace trainer::core
