// `trainer synth OUT_DIR [--task detect|pose|obb]`: writes the project's synthetic shapes dataset
// (the demo's data), its stick-figure pose dataset or its rotated-shapes OBB dataset.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "demo/synthetic_dataset.h"
#include "demo/synthetic_obb_dataset.h"
#include "demo/synthetic_pose_dataset.h"

namespace trainer::app {

Command register_synth_command(CLI::App& app, const GlobalOptions& /*global*/) {
  struct Options {
    std::string out;
    std::string task = "detect";
    demo::SyntheticOptions synth;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cli = app.add_subcommand(
      "synth",
      "generate the synthetic shapes dataset (COCO json + YOLO txt + dataset yaml), or with "
      "--task pose stick figures with 7 keypoints, or with --task obb rotated shapes with "
      "DOTA-style "
      "corner labels (YOLO txt + dataset yaml)");
  cli->add_option("out", opts->out, "output folder")->required();
  cli->add_option("--train", opts->synth.train_images, "training images")
      ->check(CLI::Range(1, 1000000));
  cli->add_option("--val", opts->synth.val_images, "validation images")
      ->check(CLI::Range(1, 1000000));
  cli->add_option("--size", opts->synth.image_size, "image side in pixels")
      ->check(CLI::Range(32, 4096));
  cli->add_option("--max-objects", opts->synth.max_objects, "objects per image (at most)")
      ->check(CLI::Range(1, 100));
  cli->add_option("--seed", opts->synth.seed, "random seed");
  cli->add_option("--task", opts->task,
                  "detect (shapes), pose (stick figures) or obb (rotated shapes)")
      ->check(CLI::IsMember({"detect", "pose", "obb"}));
  return {cli, [opts] {
            // Object sizes follow a small image size unless given: at most 60% of the side.
            auto& s = opts->synth;
            s.max_object_size = std::min(s.max_object_size, s.image_size * 6 / 10);
            s.min_object_size = std::max(4, std::min(s.min_object_size, s.max_object_size / 2));
            const bool pose = opts->task == "pose", obb = opts->task == "obb";
            if (pose) s.min_object_size = std::max(16, s.min_object_size);
            if (obb) s.min_object_size = std::max(12, s.min_object_size);
            // A half-written dataset looks like a dataset: a failure (a full disk) removes the
            // folder again when this command created it. A folder that was there is left as is.
            const bool existed = std::filesystem::exists(opts->out);
            const auto summary = [&] {
              try {
                return pose  ? demo::generate_synthetic_pose_dataset(opts->out, s)
                       : obb ? demo::generate_synthetic_obb_dataset(opts->out, s)
                             : demo::generate_synthetic_dataset(opts->out, s);
              } catch (...) {
                std::error_code ignored;
                if (!existed) std::filesystem::remove_all(opts->out, ignored);
                throw;
              }
            }();
            spdlog::info("synthetic {} dataset: {} images, {} objects -> {}",
                         pose  ? "pose"
                         : obb ? "rotated shapes"
                               : "shapes",
                         summary.images, summary.objects, summary.dataset_yaml.string());
            std::cout << summary.dataset_yaml.string() << "\n";
            return 0;
          }};
}

}  // namespace trainer::app
