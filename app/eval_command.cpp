// `trainer eval GT_JSON PRED_JSON [--iou-type bbox|segm|keypoints|obb] [--json OUT]`: the
// standalone COCO evaluator, as users run pycocotools or faster-coco-eval on a ground-truth file
// and a results file; prints the stats (12 for boxes, masks and rotated boxes, 10 for keypoints)
// the way pycocotools' summarize() does and optionally writes them (plus per-category AP) as JSON.
// `segm` is pycocotools' iouType='segm' (the annotations' "segmentation" polygons or RLE against
// the results' RLE masks). `obb` is the box protocol with the exact IoU of rotated rectangles
// ("rbox" [cx, cy, w, h, angle] or "poly" [x1, y1, ..., x4, y4] on both sides; trainer val writes
// both).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "core/atomic_file.h"
#include "data/coco_json.h"
#include "eval/coco_eval.h"
#include "eval/coco_results.h"

namespace trainer::app {
namespace {

struct EvalOptions {
  std::string ground_truth;
  std::string results;
  std::string json;
  int threads = 0;
  bool per_category = false;
  std::string iou_type = "bbox";
};

int run_eval(const EvalOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  const data::CocoFile gt = data::read_coco_json(opts.ground_truth);
  const std::vector<eval::Detection> detections = eval::read_coco_results(opts.results, gt);
  const double read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("{}: {} images, {} annotations, {} categories; {}: {} detections (read in {:.2f} s)",
               opts.ground_truth, gt.images.size(), gt.annotations.size(), gt.categories.size(),
               opts.results, detections.size(), read_seconds);
  eval::CocoEvalOptions options;
  options.threads = opts.threads;
  options.iou_type = opts.iou_type == "keypoints" ? eval::IouType::kKeypoints
                     : opts.iou_type == "obb"     ? eval::IouType::kObb
                     : opts.iou_type == "segm"    ? eval::IouType::kSegm
                                                  : eval::IouType::kBox;
  const eval::CocoStats stats = eval::evaluate_coco(gt, detections, options);
  std::cout << eval::format_coco_summary(stats);
  if (opts.per_category) {
    std::cout << fmt::format("{:>6}  {:<20} {:>8} {:>8} {:>8}\n", "id", "category", "gt", "AP",
                             "AP50");
    for (const auto& c : stats.per_category) {
      std::cout << fmt::format("{:>6}  {:<20} {:>8} {:>8.3f} {:>8.3f}\n", c.category_id, c.name,
                               c.num_gt, c.ap, c.ap50);
    }
  }
  spdlog::info("evaluated in {:.3f} s", stats.seconds);
  if (!opts.json.empty()) {
    core::write_file_atomically(opts.json, eval::coco_stats_json(stats));
    spdlog::info("wrote {}", opts.json);
  }
  return 0;
}

}  // namespace

Command register_eval_command(CLI::App& app, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "COCO evaluation of a results file: boxes or masks (the 12 stats of pycocotools), keypoints "
      "(its 10 OKS stats) or rotated boxes (the box stats on the exact rotated IoU)");
  cmd->add_option("GT_JSON", opts->ground_truth, "COCO ground truth (instances_*.json)")
      ->required();
  cmd->add_option("PRED_JSON", opts->results,
                  "detections in COCO results form: [{image_id, category_id, bbox, score}, ...] "
                  "(with \"segmentation\" RLE for --iou-type segm)")
      ->required();
  cmd->add_option("--json", opts->json, "also write the stats (and per-category AP) as JSON");
  cmd->add_option("--threads", opts->threads, "worker threads (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--per-category", opts->per_category, "print AP and AP50 per category");
  cmd->add_option("--iou-type", opts->iou_type,
                  "bbox, segm (mask IoU: the annotations' \"segmentation\" against the results' "
                  "RLE masks), keypoints (OKS with COCO's 17 sigmas; person_keypoints_*.json) or "
                  "obb (exact rotated IoU; entries with \"rbox\" or \"poly\")")
      ->check(CLI::IsMember({"bbox", "segm", "keypoints", "obb"}));
  return {cmd, [opts] { return run_eval(*opts); }};
}

}  // namespace trainer::app
