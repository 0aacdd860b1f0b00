#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "core/task.h"
#include "model/model_name.h"

using namespace trainer::model;

TEST_CASE("built-in model names parse into family and scale") {
  CHECK(builtin_model_names().size() == 10);
  const auto a = parse_model_name("yolo26n");
  CHECK(a.family == ModelFamily::kYolo26);
  CHECK(a.scale == 'n');
  const auto b = parse_model_name("YOLO11x");
  CHECK(b.family == ModelFamily::kYolo11);
  CHECK(b.scale == 'x');
  CHECK(b.display() == "yolo11x");
  // The reference spells built-ins as yaml names (args.yaml: model: yolo26n.yaml).
  const auto c = parse_model_name("/somewhere/yolo26s.yaml");
  CHECK(c.family == ModelFamily::kYolo26);
  CHECK(c.scale == 's');
}

TEST_CASE("an unknown model lists the valid names") {
  CHECK_THROWS_WITH_AS(parse_model_name("yolo27n"),
                       "unknown model 'yolo27n'; valid names: yolo26n, yolo26s, yolo26m, yolo26l, "
                       "yolo26x, yolo11n, yolo11s, yolo11m, yolo11l, yolo11x, yolo26t/yolo11t "
                       "(tiny test models), or a model .yaml path",
                       trainer::core::ConfigError);
  CHECK_THROWS_WITH_AS(parse_model_name("/nope/custom.yaml"),
                       "model yaml not found: /nope/custom.yaml", trainer::core::ConfigError);
}

TEST_CASE("every task's model name round-trips: parse, display, and back to its task") {
  for (const trainer::core::Task task : trainer::core::all_tasks()) {
    for (const char* family : {"yolo26", "yolo11"}) {
      const ModelName plain = parse_model_name(family + std::string("s"));
      ModelName name = plain;
      name.task = task;
      const std::string shown = name.display();
      CAPTURE(shown);
      CHECK(trainer::core::task_from_model_name(shown).value_or(trainer::core::Task::kDetect) ==
            task);
      const ModelName again = parse_model_name(shown);
      CHECK(again.task == task);
      CHECK(again.display() == shown);
    }
  }
}
