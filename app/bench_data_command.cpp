// `trainer bench data`: loader throughput (JSON on stdout). For each image size and worker count:
// images per second of augmented mosaic training batches with the RAM cache, and the time the
// consuming thread waited per batch. Each setting runs `--epochs` epochs; the medians are quoted.
// `--consumer-ms` sleeps per batch to stand in for a training step (then the wait shows whether
// the loader keeps up).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/bench_command.h"
#include "core/config.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/loader_options.h"

namespace trainer::app {
namespace {

struct BenchDataOptions {
  std::string data = "configs/data/coco128.yaml";
  std::vector<int> imgsz{640, 320};
  std::vector<int> workers{1, 2};
  int batch = 16;
  int epochs = 3;
  double consumer_ms = 0.0;
  bool cache = true;
};

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
  for (int imgsz : opts.imgsz) {
    for (int workers : opts.workers) {
      core::TrainConfig cfg;
      cfg.data.imgsz = imgsz;
      cfg.data.batch = opts.batch;
      cfg.data.workers = workers;
      cfg.data.cache = opts.cache ? core::CacheMode::kRam : core::CacheMode::kNone;
      data::LoaderOptions lo = data::train_loader_options(cfg);
      lo.show_progress = false;
      const auto t_cache = std::chrono::steady_clock::now();
      data::Loader loader(index, lo);
      const double cache_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_cache).count();
      std::vector<double> rates, waits;
      for (int e = 0; e < opts.epochs; ++e) {
        loader.start_epoch(e, /*mosaic=*/true);
        loader.take_wait_seconds();
        int64_t images = 0, batches = 0;
        const auto t0 = std::chrono::steady_clock::now();
        while (auto batch = loader.next()) {
          images += batch->images.size(0);
          ++batches;
          if (opts.consumer_ms > 0) {
            std::this_thread::sleep_for(
                std::chrono::duration<double, std::milli>(opts.consumer_ms));
          }
        }
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rates.push_back(images / s);
        waits.push_back(1000.0 * loader.take_wait_seconds() / std::max<int64_t>(batches, 1));
      }
      nlohmann::json run = {{"imgsz", imgsz},
                            {"workers", loader.workers()},
                            {"workers_requested", workers},
                            {"batch", opts.batch},
                            {"cache_ram", loader.cached()},
                            {"cache_build_s", cache_s},
                            {"epochs", opts.epochs},
                            {"images_per_epoch", loader.samples_per_epoch()},
                            {"images_per_s_median", median(rates)},
                            {"images_per_s", rates},
                            {"wait_ms_per_batch_median", median(waits)},
                            {"wait_ms_per_batch", waits}};
      spdlog::info("imgsz {} workers {}: {:.1f} images/s, wait {:.1f} ms/batch", imgsz,
                   loader.workers(), median(rates), median(waits));
      runs.push_back(run);
    }
  }
  nlohmann::json out = {{"bench", "data"},
                        {"dataset", spec.yaml_file.string()},
                        {"images", index.size()},
                        {"consumer_ms", opts.consumer_ms},
                        {"hardware_threads", std::thread::hardware_concurrency()},
                        {"runs", runs}};
  std::cout << out.dump(2) << "\n";
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
  cmd->add_flag("!--no-cache", opts->cache, "decode images every time instead of the RAM cache");
  return {cmd, [opts] { return run_bench_data(*opts); }};
}

}  // namespace trainer::app
