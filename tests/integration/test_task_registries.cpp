// The task registries, walked for every enum value up to core::kLastTask: the core row (names,
// model suffix, reference head class, head outputs), the engine's definition, predict's output and
// the model's head. A task missing from any of them fails here rather than falling back to
// detection (a switch without it does not compile: -Wswitch under -Werror).
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/task.h"
#include "engine/task/task_definition.h"
#include "model/model_name.h"
#include "model/yolo_model.h"
#include "predict/task_output.h"

using namespace trainer;

namespace {

std::vector<core::Task> every_enum_value() {
  std::vector<core::Task> out;
  for (int i = 0; i <= static_cast<int>(core::kLastTask); ++i) out.push_back(core::Task(i));
  return out;
}

}  // namespace

TEST_CASE("every task value has its row, definition, output and head, each naming it back") {
  CHECK(every_enum_value().size() == core::all_tasks().size());  // one row per value
  for (const core::Task task : every_enum_value()) {
    CAPTURE(static_cast<int>(task));
    const core::TaskRow& row = core::task_row(task);
    CHECK(row.task == task);
    CHECK(core::task_from_name(row.name) == task);
    CHECK(core::task_from_head_class(row.head_class) == task);
    CHECK(core::task_from_head_class(std::string("ultralytics.nn.modules.head.") + row.head_class +
                                     "26") == task);
    CHECK(core::task_with_head(row.head) == task);
    CHECK(engine::make_task_definition(task)->task() == task);
    CHECK(predict::make_task_output(task) != nullptr);
    const model::ModelName name{model::ModelFamily::kYolo26, 'n', {}, task, {}};
    CHECK(model::parse_model_name(name.display()).task == task);
    const auto net = model::build_tiny_yolo_model(model::ModelFamily::kYolo26, 3, task, {5, 3});
    CHECK(predict::predicted_task(*net) == task);
  }
}
