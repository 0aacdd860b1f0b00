// The live per-epoch progress line: epoch, batch/total, loss items, instances, size, it/s, ETA.
//
// Why: long work must show that it is alive and how long it will take. On a terminal the line is
// redrawn in place (at most a few times a second, each redraw reads the running loss from the
// device once); in a log file only the final line of each epoch is written.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace trainer::engine {

class ProgressLine {
 public:
  ProgressLine(int64_t epochs, int64_t batches_per_epoch, int64_t imgsz, bool interactive,
               std::vector<std::string> loss_names);

  void start_epoch(int64_t epoch);                       // 0-based
  void set_epochs(int64_t epochs) { epochs_ = epochs; }  // `time` re-estimated the run
  // Whether a redraw is due (rate-limited); callers then fetch the values and call update().
  bool due() const;
  void update(int64_t batch_done, const std::vector<double>& losses, int64_t instances);
  // The epoch's final line (always printed); returns it.
  std::string finish(const std::vector<double>& losses, int64_t instances);

 private:
  std::string render(int64_t batch_done, const std::vector<double>& losses,
                     int64_t instances) const;

  int64_t epochs_, batches_, imgsz_;
  bool interactive_;
  std::vector<std::string> loss_names_;
  int64_t epoch_ = 0;
  std::chrono::steady_clock::time_point epoch_start_, last_draw_;
  std::chrono::steady_clock::time_point run_start_;
  int64_t batches_done_total_ = 0;
};

std::string format_duration(double seconds);  // "1:02:03" or "2:03"

}  // namespace trainer::engine
