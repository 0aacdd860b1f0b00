// An event file in a run folder: events.out.tfevents.<unix seconds>.<hostname>.
//
// Why: `tensorboard --logdir runs` finds files by that name pattern and re-reads them as they
// grow, so each epoch's events are appended and flushed at once for a live dashboard; a resumed
// run adds a second file beside the first, which TensorBoard reads as one run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/tensorboard/event.h"

namespace trainer::core::tensorboard {

class EventFileWriter {
 public:
  // Creates (or appends to) the file in `dir` and writes the file-version event. Throws
  // std::runtime_error naming the file when it cannot be opened.
  explicit EventFileWriter(const std::filesystem::path& dir);

  // One event with these values at `step`, written and flushed; throws std::runtime_error when the
  // write fails.
  void write(int64_t step, const std::vector<ScalarValue>& scalars,
             const std::vector<ImageValue>& images = {});

  const std::filesystem::path& path() const { return path_; }

 private:
  void append(const std::string& event);

  std::filesystem::path path_;
  std::ofstream out_;
};

// "events.out.tfevents.<seconds>.<host>"; host is gethostname's, "localhost" if that fails.
std::string event_file_name(int64_t unix_seconds);

// Seconds since the epoch, as TensorBoard's wall_time.
double wall_time_now();

}  // namespace trainer::core::tensorboard
