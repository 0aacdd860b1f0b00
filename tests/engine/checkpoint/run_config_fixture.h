// Test fixture: the config of a small run (yolo26t, 5 epochs, lr0 0.02) whose checkpoints the
// resume and fit-start tests write, in `project`/run.
#pragma once

#include <filesystem>

#include "core/config.h"

namespace trainer::test {

inline core::TrainConfig small_run_config(const std::filesystem::path& project) {
  core::TrainConfig c;
  c.model.model = "yolo26t";
  c.data.data = "data/x.yaml";
  c.data.workers = 2;
  c.optim.lr0 = 0.02;
  c.schedule.epochs = 5;
  c.run.project = project.string();
  c.run.name = "run";
  return c;
}

}  // namespace trainer::test
