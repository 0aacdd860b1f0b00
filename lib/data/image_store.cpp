// The image store's plan, parallel build and per-use reads; see image_store.h.
#include "data/image_store.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <opencv2/core/utility.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "data/disk_cache.h"
#include "data/image_codec.h"
#include "data/image_io.h"
#include "data/stage_profile.h"

namespace trainer::data {
namespace {

namespace fs = std::filesystem;

// Runs fn(i) for i in [0, n) on `threads` threads with a progress line on a terminal. The first
// exception other than core::InputError stops the work and is rethrown; InputErrors are the
// callee's to log.
void parallel_for(size_t n, int threads, const char* label, bool show_progress,
                  const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0}, done{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
      ++done;
    }
  };
  const bool tty = show_progress && ::isatty(STDERR_FILENO);
  // Our threads do the parallel work, OpenCV runs serially inside them. The count restored after
  // is getNumThreads()'s, which reports the cores even after setNumThreads(0): a caller that wants
  // OpenCV serial (the loader) sets it again after the store is built.

  const bool serial_cv = threads > 1;
  const int previous_cv_threads = cv::getNumThreads();
  if (serial_cv) cv::setNumThreads(0);
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(threads, 1); ++t) pool.emplace_back(work);
  std::atomic<bool> finished{false};
  std::thread progress;
  if (tty) {
    progress = std::thread([&] {
      while (!finished) {
        std::fprintf(stderr, "\r%s: %zu/%zu", label, done.load(), n);
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
  if (serial_cv) cv::setNumThreads(previous_cv_threads);
  if (error) std::rethrow_exception(error);
}

int local_rank_count() {
  // torchrun (and trainer's own launcher) set LOCAL_WORLD_SIZE: every rank on this machine builds
  // its own cache, so they share the budget.
  const char* v = std::getenv("LOCAL_WORLD_SIZE");
  const int n = v ? std::atoi(v) : 1;
  return std::max(n, 1);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* store_kind_name(StoreKind kind) {
  switch (kind) {
    case StoreKind::kFiles:
      return "files";
    case StoreKind::kRamDecoded:
      return "ram-decoded";
    case StoreKind::kRamEncoded:
      return "ram-encoded";
    case StoreKind::kDisk:
      return "disk";
  }
  return "?";
}

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

RamCachePlan plan_ram_cache(int64_t decoded_bytes, const std::vector<int64_t>& file_bytes,
                            int64_t budget_bytes) {
  RamCachePlan plan;
  plan.budget_bytes = budget_bytes;
  plan.decoded_bytes = decoded_bytes;
  for (int64_t b : file_bytes) plan.encoded_bytes += std::max<int64_t>(b, 0);
  if (decoded_bytes <= budget_bytes) {
    plan.kind = StoreKind::kRamDecoded;
    plan.planned_bytes = decoded_bytes;
    plan.images_in_ram = static_cast<int64_t>(file_bytes.size());
    return plan;
  }
  plan.in_ram.assign(file_bytes.size(), false);
  for (size_t i = 0; i < file_bytes.size(); ++i) {
    if (file_bytes[i] >= 0 && plan.planned_bytes + file_bytes[i] <= budget_bytes) {
      plan.in_ram[i] = true;
      plan.planned_bytes += file_bytes[i];
      ++plan.images_in_ram;
    }
  }
  plan.kind = plan.images_in_ram > 0 ? StoreKind::kRamEncoded : StoreKind::kFiles;
  if (plan.kind == StoreKind::kFiles) plan.in_ram.clear();
  return plan;
}

int64_t ram_cache_budget(double cache_gb, int64_t available, int local_ranks) {
  const int ranks = std::max(local_ranks, 1);
  if (cache_gb > 0) return static_cast<int64_t>(cache_gb * 1e9) / ranks;
  if (available < 0) return 0;  // unknown memory: cache nothing rather than risk the machine
  return available / 2 / ranks;
}

ImageStore::~ImageStore() = default;

std::unique_ptr<ImageStore> ImageStore::open(const DatasetIndex& dataset, int imgsz,
                                             core::CacheMode mode, double cache_gb,
                                             const std::string& cache_dir, int threads,
                                             bool show_progress) {
  std::unique_ptr<ImageStore> store(new ImageStore());
  store->dataset_ = &dataset;
  store->imgsz_ = imgsz;
  const size_t n = dataset.items.size();
  const auto t0 = std::chrono::steady_clock::now();
  // The plan is logged always (what is cached and how much memory it takes matters in a batch job's
  // log too); only the progress line is for terminals.
  auto log = [](const std::string& line) { spdlog::info("{}", line); };

  if (mode == core::CacheMode::kRam) {
    int64_t decoded = 0;
    std::vector<int64_t> file_bytes(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& item = dataset.items[i];
      const cv::Size s = long_side_size(item.height, item.width, imgsz);
      decoded += int64_t(s.width) * s.height * 3;
      std::error_code ec;
      const auto size = fs::file_size(item.image, ec);
      file_bytes[i] = ec ? -1 : static_cast<int64_t>(size);
    }
    const int64_t available = available_memory_bytes();
    const int ranks = local_rank_count();
    int64_t budget = ram_cache_budget(cache_gb, available, ranks);
    if (cache_gb > 0 && available >= 0 && budget > available * 9 / 10 / ranks) {
      spdlog::warn(
          "cache_gb {:.1f} is more than 90% of the {:.1f} GB available: the cache keeps "
          "to {:.1f} GB",
          cache_gb, available / 1e9, available * 0.9 / 1e9);
      budget = available * 9 / 10 / ranks;
    }
    const RamCachePlan plan = plan_ram_cache(decoded, file_bytes, budget);
    store->kind_ = plan.kind;
    if (plan.kind == StoreKind::kRamDecoded) {
      store->decoded_.resize(n);
      parallel_for(n, threads, "caching images (decoded)", show_progress, [&](size_t i) {
        try {
          store->decoded_[i] = read_resized_bgr(dataset.items[i].image, imgsz);
        } catch (const core::InputError& e) {
          // Unreadable since indexing: left empty; the loader logs it and uses another image.
          spdlog::warn("{} (not cached)", e.what());
        }
      });
    } else if (plan.kind == StoreKind::kRamEncoded) {
      store->encoded_.resize(n);
      parallel_for(n, threads, "caching image files", show_progress, [&](size_t i) {
        if (plan.in_ram[i] && !read_file_bytes(dataset.items[i].image, &store->encoded_[i])) {
          store->encoded_[i].clear();  // read from its file per use, which logs the problem
        }
      });
    }
    for (const auto& m : store->decoded_) store->ram_bytes_ += int64_t(m.total() * m.elemSize());
    for (const auto& e : store->encoded_) {
      store->ram_bytes_ += static_cast<int64_t>(e.size());
      store->images_in_ram_ += e.empty() ? 0 : 1;
    }
    if (plan.kind == StoreKind::kRamDecoded) {
      for (const auto& m : store->decoded_) store->images_in_ram_ += m.empty() ? 0 : 1;
    }
    log(
        fmt::format("cache: ram, budget {:.2f} GB{}: decoded images need {:.2f} GB, files {:.2f} "
                    "GB; {} ({:.1f} s)",
                    budget / 1e9, cache_gb > 0 ? " (cache_gb)" : " (half the available memory)",
                    decoded / 1e9, plan.encoded_bytes / 1e9, store->describe(), seconds_since(t0)));
    if (plan.kind == StoreKind::kFiles) {
      spdlog::warn(
          "cache: ram holds nothing within {:.2f} GB: images are decoded from their files "
          "every epoch (raise cache_gb, or use cache: disk)",
          budget / 1e9);
    }
    return store;
  }

  if (mode == core::CacheMode::kDisk) {
    if (!cache_dir.empty()) {
      std::error_code ec;
      fs::create_directories(cache_dir, ec);
      if (ec) {
        throw core::InputError(
            fmt::format("cache_dir {}: cannot be created: {}", cache_dir, ec.message()));
      }
    }
    store->kind_ = StoreKind::kDisk;
    store->disk_files_.resize(n);
    std::atomic<int64_t> reused{0}, written{0}, failed{0};
    // A folder that takes no files (read-only dataset): stop decoding for nothing after a few.
    constexpr int64_t kFailuresBeforeGivingUp = 8;
    std::mutex reason_mutex;
    std::string first_failure;
    parallel_for(n, threads, "disk cache", show_progress, [&](size_t i) {
      const fs::path& image = dataset.items[i].image;
      const fs::path file = disk_cache_file(image, imgsz, cache_dir);
      const SourceStamp stamp = source_stamp(image);
      const ImageLabels& item = dataset.items[i];
      std::string why;
      // The header and the file size decide; the pixels are read per use.
      if (disk_cache_header_ok(file, imgsz, stamp, long_side_size(item.height, item.width, imgsz),
                               &why)) {
        store->disk_files_[i] = file.string();
        ++reused;
        return;
      }
      if (failed >= kFailuresBeforeGivingUp && written == 0) return;
      cv::Mat resized;
      try {
        resized = read_resized_bgr(image, imgsz);
      } catch (const core::InputError& e) {
        spdlog::warn("{} (not cached)", e.what());
        return;
      }
      std::string error;
      if (write_disk_cache(file, resized, imgsz, stamp, &error)) {
        store->disk_files_[i] = file.string();
        ++written;
      } else {
        ++failed;
        std::lock_guard<std::mutex> lock(reason_mutex);
        if (first_failure.empty()) first_failure = error;
      }
    });
    store->disk_reused_ = reused;
    store->disk_written_ = written;
    if (failed > 0) {
      spdlog::warn(
          "cache: disk could not write {} of {} files{} (those images are decoded from "
          "their files every epoch; cache_dir puts the files elsewhere); the first: {}",
          failed.load(), n,
          failed >= kFailuresBeforeGivingUp && written == 0 ? " and stopped trying" : "",
          first_failure);
    }
    log(fmt::format("cache: disk in {}: {} reused, {} written ({:.1f} s)",
                    cache_dir.empty() ? "the image folders" : cache_dir, reused.load(),
                    written.load(), seconds_since(t0)));
    return store;
  }
  store->kind_ = StoreKind::kFiles;
  return store;
}

cv::Mat ImageStore::resized(size_t i) const {
  const ImageLabels& item = dataset_->items[i];
  if (!decoded_.empty()) {
    if (decoded_[i].empty()) {
      throw core::InputError(item.image.string() + ": could not be decoded for the RAM cache");
    }
    return decoded_[i];
  }
  if (!encoded_.empty() && !encoded_[i].empty()) {
    return decode_resized_bgr_or_throw(encoded_[i], item.image, imgsz_);
  }
  if (!disk_files_.empty() && !disk_files_[i].empty()) {
    std::string why;
    cv::Mat image;
    {
      StageScope scope(Stage::kCacheRead);
      image = read_disk_cache(disk_files_[i], imgsz_, source_stamp(item.image), &why);
    }
    if (!image.empty()) return image;
    // Changed or damaged since the run started: the source decides, as without a cache.
  }
  return read_resized_bgr(item.image, imgsz_);
}

std::string ImageStore::describe() const {
  const size_t n = dataset_ ? dataset_->items.size() : 0;
  switch (kind_) {
    case StoreKind::kFiles:
      return "files (no cache)";
    case StoreKind::kRamDecoded:
      return fmt::format("ram (decoded, resized): {} of {} images, {:.2f} GB", images_in_ram_, n,
                         ram_bytes_ / 1e9);
    case StoreKind::kRamEncoded:
      return fmt::format("ram (encoded files, decoded per use): {} of {} images, {:.2f} GB",
                         images_in_ram_, n, ram_bytes_ / 1e9);
    case StoreKind::kDisk: {
      int64_t cached = 0;
      for (const auto& f : disk_files_) cached += f.empty() ? 0 : 1;
      return fmt::format("disk (resized files): {} of {} images", cached, n);
    }
  }
  return "?";
}

}  // namespace trainer::data
