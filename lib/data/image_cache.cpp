// Parallel RAM cache build with a memory check and progress; see image_cache.h.
#include "data/image_cache.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <opencv2/core/utility.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "data/image_io.h"

namespace trainer::data {

int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream s(line.substr(13));
      int64_t kb = 0;
      s >> kb;
      return kb * 1024;
    }
  }
  return -1;
}

int64_t ImageCache::required_bytes(const DatasetIndex& dataset, int imgsz) {
  int64_t total = 0;
  for (const auto& item : dataset.items) {
    const cv::Size s = long_side_size(item.height, item.width, imgsz);
    total += int64_t(s.width) * s.height * 3;
  }
  return total;
}

std::optional<ImageCache> ImageCache::build(const DatasetIndex& dataset, int imgsz, int threads,
                                            bool show_progress) {
  const int64_t need = required_bytes(dataset, imgsz);
  const int64_t available = available_memory_bytes();
  if (available >= 0 && need * 11 / 10 > available) {
    spdlog::warn("not caching images: {:.1f} GB needed (+10%), {:.1f} GB available", need / 1e9,
                 available / 1e9);
    return std::nullopt;
  }
  ImageCache cache;
  cache.imgsz_ = imgsz;
  cache.images_.resize(dataset.items.size());
  std::atomic<size_t> next{0}, done{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto start = std::chrono::steady_clock::now();
  const bool tty = show_progress && ::isatty(STDERR_FILENO);
  auto work = [&] {
    for (size_t i = next++; i < cache.images_.size(); i = next++) {
      try {
        cache.images_[i] = resize_long_side(read_image_bgr(dataset.items[i].image), imgsz);
      } catch (const core::InputError& e) {
        // Unreadable since indexing: left empty; the loader logs it and uses another image.
        spdlog::warn("{} (not cached)", e.what());
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = cache.images_.size();
      }
      ++done;
    }
  };
  const int previous_cv_threads = cv::getNumThreads();
  cv::setNumThreads(0);  // our threads do the parallel work; OpenCV runs serially inside them
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(threads, 1); ++t) pool.emplace_back(work);
  std::thread progress;
  std::atomic<bool> finished{false};
  if (tty) {
    progress = std::thread([&] {
      while (!finished) {
        std::fprintf(stderr, "\rcaching images: %zu/%zu", done.load(), cache.images_.size());
        std::fflush(stderr);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
  work();
  for (auto& t : pool) t.join();
  finished = true;
  if (progress.joinable()) {
    progress.join();
    std::fprintf(stderr, "\r");
  }
  cv::setNumThreads(previous_cv_threads);
  if (error) std::rethrow_exception(error);
  for (const auto& im : cache.images_) cache.bytes_ += int64_t(im.total() * im.elemSize());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (show_progress) {
    spdlog::info("cached {} images in RAM: {:.2f} GB in {:.1f} s ({} threads)",
                 cache.images_.size(), cache.bytes_ / 1e9, seconds, std::max(threads, 1));
  }
  return cache;
}

}  // namespace trainer::data
