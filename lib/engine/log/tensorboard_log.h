// A training run's TensorBoard events: each epoch's results.csv columns as scalars, the batch
// previews and results.png as images, in the run folder (`tensorboard --logdir runs`).
//
// Why: a live dashboard is how users watch a long run; results.csv stays the record. The tags are
// the csv's column names so the two read alike. A failure to write events must not stop training:
// it is logged once and the log turns itself off.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/tensorboard/event.h"
#include "engine/log/epoch_record.h"

namespace trainer::core::tensorboard {
class EventFileWriter;
}

namespace trainer::engine {

// The scalars of one epoch: every column of the record but `epoch` (the step), NaN ones left out,
// then "time/epoch" (this epoch's seconds; the `time` column is the run's so far).
std::vector<core::tensorboard::ScalarValue> epoch_scalars(const EpochRecord& record,
                                                          double epoch_seconds);

class TensorBoardLog {
 public:
  // Opens a new event file in `run_dir`; on failure warns and stays off.
  explicit TensorBoardLog(const std::filesystem::path& run_dir);
  ~TensorBoardLog();
  TensorBoardLog(const TensorBoardLog&) = delete;
  TensorBoardLog& operator=(const TensorBoardLog&) = delete;

  // The epoch's scalars at step record.epoch (1-based, as in results.csv), flushed.
  void epoch(const EpochRecord& record, double epoch_seconds);
  // An image file (JPEG, PNG) re-encoded as PNG under `tag`; a missing or unreadable file is
  // skipped with a warning.
  void image(const std::string& tag, const std::filesystem::path& file, int64_t step);

  bool enabled() const { return writer_ != nullptr; }

 private:
  void disable(const std::string& why);
  std::unique_ptr<core::tensorboard::EventFileWriter> writer_;
};

}  // namespace trainer::engine
