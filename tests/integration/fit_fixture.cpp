#include "fit_fixture.h"

#include <unistd.h>

#include "demo/synthetic_dataset.h"

namespace trainer::test {

std::filesystem::path tiny_synthetic_dataset() {
  static const std::filesystem::path yaml = [] {
    const auto dir =
        std::filesystem::temp_directory_path() / ("trainer-synth-" + std::to_string(::getpid()));
    demo::SyntheticOptions o;
    o.train_images = 16;
    o.val_images = 8;
    o.image_size = 128;
    o.min_object_size = 24;
    o.max_object_size = 96;
    o.max_objects = 3;
    o.seed = 7;
    return demo::generate_synthetic_dataset(dir, o).dataset_yaml;
  }();
  return yaml;
}

core::TrainConfig tiny_fit_config(const std::filesystem::path& project, const std::string& name,
                                  int epochs) {
  core::TrainConfig c;
  c.model.model = "yolo26t";
  c.data.data = tiny_synthetic_dataset().string();
  c.data.imgsz = 128;
  c.data.batch = 4;
  c.data.workers = 1;
  c.schedule.epochs = epochs;
  c.schedule.close_mosaic = 1;
  c.schedule.warmup_epochs = 1;
  c.optim.optimizer = "MuSGD";
  c.optim.lr0 = 0.01;
  c.optim.nbs = 4;  // accumulate 1: an optimizer step every batch
  c.run.precision = core::Precision::kFP32;
  c.run.device = "cpu";
  c.run.project = project.string();
  c.run.name = name;
  c.run.plots = false;
  return c;
}

}  // namespace trainer::test
