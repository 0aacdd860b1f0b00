// What a training task decides, asked by the engine instead of assumed.
//
// Why: fit(), the train step, the validator, results.csv, checkpoints, previews and `trainer val`
// ask the run's TaskDefinition (detect, pose, segment, obb: engine/task/<task>_task.h) instead of
// branching on the task. A new task adds its definition and scorer units in engine/task/ and one
// case in make_task_definition() (README, "Adding a task").
//
// What a task owns: the model head, the loss and its named items, the results columns (loss
// items, metrics, extras), the scoring of a validation (its TaskScorer), how a validation becomes
// an epoch's values and its fitness, the validation table, the training-batch preview and the
// predictions file.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/task.h"
#include "data/batch.h"
#include "data/dataset_yaml.h"
#include "data/image_labels.h"
#include "engine/log/epoch_record.h"
#include "engine/task/task_scorer.h"
#include "engine/validation_result.h"
#include "loss/yolo_loss.h"
#include "model/model_name.h"
#include "model/yolo_model.h"

namespace trainer::engine {

class TaskDefinition {
 public:
  virtual ~TaskDefinition() = default;

  virtual core::Task task() const = 0;

  // What the label rows' polygons are to this task: kept as oriented boxes (OBB) or outlines
  // (segmentation), or, by default, turned into their enclosing boxes.
  virtual data::PolygonKind label_polygons() const { return data::PolygonKind::kNone; }

  // The model `name` with this task's head for `dataset` (its classes; pose: its kpt_shape):
  // build_task_model with this task (`task: pose` with a plain name builds the pose head).
  model::YoloModel build_model(const model::ModelName& name,
                               const data::DatasetSpec& dataset) const;
  // The training objective for `model`; its LossResult::items follow columns().loss_names.
  virtual std::unique_ptr<loss::YoloLoss> build_loss(const core::LossConfig& gains,
                                                     model::YoloModelImpl& model,
                                                     const data::DatasetSpec& dataset) const = 0;
  // Whether the loss reaches every trainable parameter whatever the batch holds (a batch without
  // objects included): data-parallel training then decides unused-parameter detection once per
  // epoch instead of detecting every step (distributed/gradient_reducer.h). Checked both ways for
  // every task by tests/engine/task/test_loss_reaches_parameters.cpp.
  virtual bool loss_reaches_every_parameter() const { return true; }
  // The results.csv columns this task contributes for `model` (loss item names depend on it).
  virtual EpochColumns columns(model::YoloModelImpl& model) const = 0;

  // The validation's confidence threshold when the config leaves `conf` at its default; nullopt:
  // that default (the reference's OBB validator keeps scores > 0.01, the others > 0.001).
  virtual std::optional<double> validation_conf() const { return std::nullopt; }
  // The scorer of one validation of a model with this task's head.
  virtual std::unique_ptr<TaskScorer> make_scorer(const ScorerSetup& setup) const = 0;

  // A validation's values in the order of columns(); the fitness that picks the best checkpoint.
  virtual EpochValidation epoch_validation(const ValidationResult& result) const = 0;
  virtual double fitness(const ValidationResult& result) const = 0;
  // The table printed after a validation (one "all" row, and one per class when `per_class`).
  virtual std::string validation_table(const ValidationResult& result,
                                       const std::vector<std::string>& names,
                                       bool per_class) const = 0;

  // A training batch drawn with its labels (train_batchN.jpg).
  virtual void save_batch_preview(const data::Batch& batch, const std::vector<std::string>& names,
                                  const std::filesystem::path& file) const = 0;
  // The predictions of a validation run with keep_detections (`trainer val`) in `file`
  // (predictions.json), and whatever else the task writes beside it (OBB: DOTA's Task1 files).
  virtual void write_predictions(const ValidationResult& result,
                                 const std::vector<std::string>& names,
                                 const std::filesystem::path& file) const = 0;
};

// The box, class and DFL gains of `config`: every task's loss weighs its detection terms by them.
loss::LossGains detection_gains(const core::LossConfig& config);

// The definition of `task` (the registry: one case per task).
std::unique_ptr<TaskDefinition> make_task_definition(core::Task task);

// The run's task: the `task` key; else, for a weights file (model=runs/x/weights/best.pt), the
// task it was trained for (its checkpoint config or ../args.yaml); else the model name's.
core::Task resolved_task(const core::TrainConfig& config);

// The definition of the config's task (resolved_task).
std::unique_ptr<TaskDefinition> make_task_definition(const core::TrainConfig& config);

}  // namespace trainer::engine
