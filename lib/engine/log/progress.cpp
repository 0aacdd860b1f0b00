// See progress.h.
#include "engine/log/progress.h"

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

ProgressLine::ProgressLine(int64_t epochs, int64_t batches_per_epoch, int64_t imgsz,
                           bool interactive, std::vector<std::string> loss_names)
    : epochs_(epochs),
      batches_(batches_per_epoch),
      imgsz_(imgsz),
      interactive_(interactive),
      loss_names_(std::move(loss_names)),
      run_start_(Clock::now()) {}

void ProgressLine::start_epoch(int64_t epoch) {
  epoch_ = epoch;
  epoch_start_ = last_draw_ = Clock::now();
  if (interactive_) {
    std::string header = fmt::format("{:>14}{:>11}", "Epoch", "batch");
    for (const auto& name : loss_names_) header += fmt::format("{:>10}", name);
    header += fmt::format("{:>11}{:>7}", "Instances", "Size");
    std::fprintf(stderr, "%s\n", header.c_str());
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
  std::string line = fmt::format("{:>14}{:>11}", fmt::format("{}/{}", epoch_ + 1, epochs_),
                                 fmt::format("{}/{}", done, batches_));
  for (size_t k = 0; k < loss_names_.size(); ++k) {
    line += fmt::format("{:>10.4g}", k < losses.size() ? losses[k] : 0.0);
  }
  return line + fmt::format("{:>11}{:>7}  {:.2f} it/s  epoch {} ETA {}, run ETA {}", instances,
                            imgsz_, rate, format_duration(elapsed), format_duration(eta_epoch),
                            format_duration(eta_run));
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
