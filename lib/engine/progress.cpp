// See progress.h.
#include "engine/progress.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

namespace trainer::engine {

using Clock = std::chrono::steady_clock;

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

const std::vector<std::string>& ProgressLine::loss_names() {
  static const std::vector<std::string> names = {"box_loss", "cls_loss", "dfl_loss"};
  return names;
}

ProgressLine::ProgressLine(int64_t epochs, int64_t batches_per_epoch, int64_t imgsz,
                           bool interactive)
    : epochs_(epochs),
      batches_(batches_per_epoch),
      imgsz_(imgsz),
      interactive_(interactive),
      run_start_(Clock::now()) {}

void ProgressLine::start_epoch(int64_t epoch) {
  epoch_ = epoch;
  epoch_start_ = last_draw_ = Clock::now();
  if (interactive_) {
    std::fprintf(stderr, "%14s%11s%10s%10s%10s%11s%7s\n", "Epoch", "batch", "box_loss", "cls_loss",
                 "dfl_loss", "Instances", "Size");
  }
}

bool ProgressLine::due() const {
  return interactive_ && Clock::now() - last_draw_ > std::chrono::milliseconds(300);
}

std::string ProgressLine::render(int64_t done, const std::vector<double>& losses,
                                 int64_t instances) const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - epoch_start_).count();
  const double rate = done > 0 && elapsed > 0 ? done / elapsed : 0.0;
  const double eta_epoch = rate > 0 ? (batches_ - done) / rate : 0.0;
  const double eta_run = rate > 0 ? eta_epoch + (epochs_ - epoch_ - 1) * batches_ / rate : 0.0;
  return fmt::format(
      "{:>14}{:>11}{:>10.4g}{:>10.4g}{:>10.4g}{:>11}{:>7}  {:.2f} it/s  "
      "epoch {} ETA {}, run ETA {}",
      fmt::format("{}/{}", epoch_ + 1, epochs_), fmt::format("{}/{}", done, batches_),
      losses.size() > 0 ? losses[0] : 0.0, losses.size() > 1 ? losses[1] : 0.0,
      losses.size() > 2 ? losses[2] : 0.0, instances, imgsz_, rate, format_duration(elapsed),
      format_duration(eta_epoch), format_duration(eta_run));
}

void ProgressLine::update(int64_t done, const std::vector<double>& losses, int64_t instances) {
  last_draw_ = Clock::now();
  if (interactive_) std::fprintf(stderr, "\r%s", render(done, losses, instances).c_str());
}

std::string ProgressLine::finish(const std::vector<double>& losses, int64_t instances) {
  std::string line = render(batches_, losses, instances);
  if (interactive_) std::fprintf(stderr, "\r\033[K");  // the log line below replaces it
  spdlog::info("{}", line);
  return line;
}

}  // namespace trainer::engine
