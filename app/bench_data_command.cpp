// `trainer bench data`: loader throughput (JSON on stdout). For each cache mode, image size and
// worker count: images per second of augmented mosaic training batches, the time the consuming
// thread waited per batch, where the workers' time went per stage (data/stage_profile.h, in ms per
// image summed over the workers), the cache's size and the peak RSS of the setting. Each setting
// runs `--epochs` epochs; the medians are quoted. `--consumer-ms` sleeps per batch to stand in for
// a training step (then the wait shows whether the loader keeps up). Also the objects per image of
// the dataset and per augmented sample (mosaic), with what each max_instances of static_shapes
// would keep and pad. `cache: disk` writes its
// files to `--cache-dir` (default: a temporary folder removed afterwards, so a benchmark never
// writes beside a shared dataset); the first epoch of a fresh disk cache includes building it.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/bench_command.h"
#include "bench/peak_memory.h"
#include "core/atomic_file.h"
#include "core/config.h"
#include "data/dataset.h"
#include "data/image_codec.h"
#include "data/image_store.h"
#include "data/loader.h"
#include "data/loader_options.h"
#include "data/recent_images.h"
#include "data/stage_profile.h"

namespace trainer::app {
namespace {

struct BenchDataOptions {
  std::string data = "configs/data/coco128.yaml";
  std::vector<int> imgsz{640, 320};
  std::vector<int> workers{1, 2};
  int batch = 16;
  int epochs = 3;
  double consumer_ms = 0.0;
  std::vector<std::string> cache{"ram"};
  bool no_cache = false;
  double cache_gb = 0.0;
  std::string cache_dir;
  std::string json;
};

core::CacheMode parse_cache(const std::string& name) {
  if (name == "none") return core::CacheMode::kNone;
  if (name == "ram") return core::CacheMode::kRam;
  if (name == "disk") return core::CacheMode::kDisk;
  throw CLI::ValidationError("--cache", "'" + name + "' is not none, ram or disk");
}

nlohmann::json stage_report(const data::StageTotals& t, int64_t images) {
  nlohmann::json stages = nlohmann::json::object();
  int64_t total = 0;
  for (int i = 0; i < data::kStageCount; ++i) total += t.ns[i];
  for (int i = 0; i < data::kStageCount; ++i) {
    if (t.calls[i] == 0) continue;
    stages[data::stage_name(static_cast<data::Stage>(i))] = {
        {"ms_per_image", t.ns[i] / 1e6 / std::max<int64_t>(images, 1)},
        {"share", total > 0 ? double(t.ns[i]) / double(total) : 0.0},
        {"calls", t.calls[i]}};
  }
  return stages;
}

// Objects per sample: quantiles, the largest, and the share of samples each candidate
// max_instances (static_shapes) holds whole, with the padding it costs: padded rows per real row.
nlohmann::json instance_report(std::vector<int64_t> counts) {
  std::sort(counts.begin(), counts.end());
  const auto n = static_cast<double>(counts.size());
  const auto quantile = [&](double q) {
    return counts.empty() ? 0 : counts[std::min(counts.size() - 1, static_cast<size_t>(q * n))];
  };
  double total = 0;
  for (const int64_t c : counts) total += static_cast<double>(c);
  nlohmann::json coverage = nlohmann::json::object();
  for (const int64_t m : {50, 100, 150, 200, 300, 500}) {
    int64_t within = 0, dropped = 0;
    for (const int64_t c : counts) {
      if (c <= m) ++within;
      dropped += std::max<int64_t>(c - m, 0);
    }
    coverage[std::to_string(m)] = {
        {"samples_within", counts.empty() ? 1.0 : static_cast<double>(within) / n},
        {"objects_dropped", total > 0 ? static_cast<double>(dropped) / total : 0.0},
        {"padded_rows_per_object", total > 0 ? static_cast<double>(m) * n / total : 0.0}};
  }
  return {{"samples", counts.size()},
          {"mean", counts.empty() ? 0.0 : total / n},
          {"p50", quantile(0.5)},
          {"p90", quantile(0.9)},
          {"p99", quantile(0.99)},
          {"p999", quantile(0.999)},
          {"max", counts.empty() ? 0 : counts.back()},
          {"max_instances", coverage}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int run_bench_data(const BenchDataOptions& opts) {
  const data::DatasetSpec spec = data::load_dataset_yaml(opts.data);
  data::LoadOptions load;
  load.log = false;
  const data::DatasetIndex index = data::load_split(spec, data::Split::kTrain, load);
  nlohmann::json runs = nlohmann::json::array();
  const std::vector<std::string> caches =
      opts.no_cache ? std::vector<std::string>{"none"} : opts.cache;
  std::string cache_dir = opts.cache_dir;
  bool remove_cache_dir = false;
  if (cache_dir.empty()) {
    cache_dir = (std::filesystem::temp_directory_path() /
                 ("trainer-bench-disk-cache-" + std::to_string(::getpid())))
                    .string();
    remove_cache_dir = true;
  }
  data::set_stage_profiling(true);
  for (const std::string& cache : caches) {
    for (int imgsz : opts.imgsz) {
      for (int workers : opts.workers) {
        core::TrainConfig cfg;
        cfg.data.imgsz = imgsz;
        cfg.data.batch = opts.batch;
        cfg.data.workers = workers;
        cfg.data.cache = parse_cache(cache);
        cfg.data.cache_gb = opts.cache_gb;
        cfg.data.cache_dir = cache_dir;
        data::LoaderOptions lo = data::train_loader_options(cfg);
        lo.show_progress = false;
        bench::reset_peak_memory("cpu");  // VmHWM per setting
        const auto t_cache = std::chrono::steady_clock::now();
        data::Loader loader(index, lo);
        const double cache_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t_cache).count();
        std::vector<double> rates, waits;
        std::vector<int64_t> sample_instances;  // objects per augmented sample, every epoch
        data::StageTotals stages;
        int64_t staged_images = 0;
        for (int e = 0; e < opts.epochs; ++e) {
          data::reset_stage_totals();
          loader.start_epoch(e, /*mosaic=*/true);
          loader.take_wait_seconds();
          int64_t images = 0, batches = 0;
          const auto t0 = std::chrono::steady_clock::now();
          while (auto batch = loader.next()) {
            images += batch->images.size(0);
            ++batches;
            std::vector<int64_t> per_image(static_cast<size_t>(batch->images.size(0)), 0);
            const auto image_column = batch->labels.select(1, 0).to(torch::kLong).contiguous();
            const auto* image = image_column.data_ptr<int64_t>();
            for (int64_t i = 0; i < image_column.size(0); ++i) ++per_image[image[i]];
            sample_instances.insert(sample_instances.end(), per_image.begin(), per_image.end());
            if (opts.consumer_ms > 0) {
              std::this_thread::sleep_for(
                  std::chrono::duration<double, std::milli>(opts.consumer_ms));
            }
          }
          const double s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          rates.push_back(images / s);
          waits.push_back(1000.0 * loader.take_wait_seconds() / std::max<int64_t>(batches, 1));
          if (e > 0 || opts.epochs == 1) {  // the first epoch warms caches and allocators
            const data::StageTotals t = data::stage_totals();
            for (int i = 0; i < data::kStageCount; ++i) {
              stages.ns[i] += t.ns[i];
              stages.calls[i] += t.calls[i];
            }
            staged_images += images;
          }
        }
        nlohmann::json run = {{"cache", cache},
                              {"store", data::store_kind_name(loader.images().kind())},
                              {"store_detail", loader.images().describe()},
                              {"cache_ram_bytes", loader.images().ram_bytes()},
                              {"imgsz", imgsz},
                              {"workers", loader.workers()},
                              {"workers_requested", workers},
                              {"batch", opts.batch},
                              {"cache_build_s", cache_s},
                              {"peak_rss_bytes", bench::process_peak_rss_bytes()},
                              {"stages", stage_report(stages, staged_images)},
                              {"epochs", opts.epochs},
                              {"images_per_epoch", loader.samples_per_epoch()},
                              {"images_per_s_median", median(rates)},
                              {"images_per_s", rates},
                              {"wait_ms_per_batch_median", median(waits)},
                              {"wait_ms_per_batch", waits},
                              {"instances_per_sample", instance_report(sample_instances)}};
        if (const data::RecentImages* recent = loader.recent_images()) {
          const int64_t lookups = recent->hits() + recent->misses();
          run["recent_images"] = {
              {"capacity", recent->capacity()},
              {"hit_rate", lookups > 0 ? double(recent->hits()) / double(lookups) : 0.0}};
        }
        spdlog::info("cache {} ({}) imgsz {} workers {}: {:.1f} images/s, wait {:.1f} ms/batch",
                     cache, data::store_kind_name(loader.images().kind()), imgsz, loader.workers(),
                     median(rates), median(waits));
        runs.push_back(run);
      }
    }
  }
  data::set_stage_profiling(false);
  if (remove_cache_dir) std::filesystem::remove_all(cache_dir);
  std::vector<int64_t> label_instances;  // the dataset's own objects per image, unaugmented
  for (const auto& item : index.items) {
    label_instances.push_back(static_cast<int64_t>(item.boxes.size()));
  }
  nlohmann::json out = {{"bench", "data"},
                        {"dataset", spec.yaml_file.string()},
                        {"images", index.size()},
                        {"image_codec", data::image_codec_name()},
                        {"consumer_ms", opts.consumer_ms},
                        {"instances_per_image", instance_report(label_instances)},
                        {"hardware_threads", std::thread::hardware_concurrency()},
                        {"runs", runs}};
  const std::string text = out.dump(2) + "\n";
  std::cout << text;
  if (!opts.json.empty()) core::write_file_atomically(opts.json, text);
  return 0;
}

}  // namespace

Command register_bench_data_command(CLI::App& bench, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<BenchDataOptions>();
  CLI::App* cmd = bench.add_subcommand("data", "loader throughput: mosaic batches per second");
  cmd->add_option("--data", opts->data, "dataset yaml (default configs/data/coco128.yaml)");
  cmd->add_option("--imgsz", opts->imgsz, "image sizes")->delimiter(',');
  cmd->add_option("--workers", opts->workers, "worker counts")->delimiter(',');
  cmd->add_option("--batch", opts->batch, "batch size")->check(CLI::Range(1, 1024));
  cmd->add_option("--epochs", opts->epochs, "epochs per setting")->check(CLI::Range(1, 1000));
  cmd->add_option("--consumer-ms", opts->consumer_ms, "simulated training step per batch (ms)");
  cmd->add_option("--cache", opts->cache, "cache modes to compare: none, ram, disk (default ram)")
      ->delimiter(',');
  cmd->add_flag("--no-cache", opts->no_cache, "same as --cache none");
  cmd->add_option("--json", opts->json, "also write the JSON to this file");
  cmd->add_option("--cache-gb", opts->cache_gb, "cache: ram budget in GB (default auto)");
  cmd->add_option("--cache-dir", opts->cache_dir,
                  "cache: disk folder (default a temporary one, removed afterwards)");
  return {cmd, [opts] { return run_bench_data(*opts); }};
}

}  // namespace trainer::app
