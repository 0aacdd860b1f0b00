// Tested by tests/core/test_config_defaults.cpp: run-section defaults equal the reference and lie
//   in their ranges (task row via test_task).
// The rows of the configuration table for the run itself: task, seed, device and precision, the run
// folder, checkpoints, validation and logs, step options (channels_last, static_shapes, cuda_graph)
// and data-parallel settings (see core/config_schema.h for why there is one table).
#include "core/schema/field_builders.h"

namespace trainer::core::schema {
namespace {

// `task`: one of the tasks, or unset (null) = from the model name; printed and written resolved,
// so args.yaml names the task as the reference's does.
FieldSpec task_field() {
  FieldSpec f;
  f.key = "task";
  f.section = "run";
  f.type = FieldType::kChoice;
  f.help = "detect, pose, segment or obb (null: from the model name's -pose/-seg/-obb suffix)";
  for (Task task : all_tasks()) f.choices.emplace_back(task_name(task));
  f.null_value = std::string();
  f.get = [](const TrainConfig& c) -> FieldValue {
    return std::string(task_name(
        c.run.task.value_or(task_from_model_name(c.model.model).value_or(Task::kDetect))));
  };
  f.set = [](TrainConfig& c, const FieldValue& v) {
    c.run.task = task_from_name(std::get<std::string>(v));  // "" (null): unset
  };
  return f;
}

}  // namespace

std::vector<FieldSpec> run_fields() {
  std::vector<FieldSpec> f;
  f.push_back(task_field());
  f.push_back(int_field(
      "seed", "run", [](auto& c) -> auto& { return c.run.seed; }, closed(0, 4294967295.0),
      "random seed"));
  f.push_back(bool_field(
      "deterministic", "run", [](auto& c) -> auto& { return c.run.deterministic; },
      "deterministic algorithms where available"));
  {
    auto nms = choice_field<NmsMode>(
        "nms", "run", [](auto& c) -> auto& { return c.run.nms; },
        {{"auto", NmsMode::kAuto}, {"true", NmsMode::kOn}, {"false", NmsMode::kOff}},
        "YOLO26 validation: auto/null or true = one-to-many head + NMS (the reference's default), "
        "false = NMS-free one-to-one top-k");
    nms.yaml_true_choice = "true";
    nms.yaml_false_choice = "false";
    f.push_back(std::move(nms));
  }
  f.push_back(choice_field<Precision>(
      "precision", "run", [](auto& c) -> auto& { return c.run.precision; },
      {{"auto", Precision::kAuto}, {"bf16", Precision::kBF16}, {"fp32", Precision::kFP32}},
      "forward/loss precision: bf16 autocast, fp32, or auto (bf16 where the device runs it "
      "natively, on a CPU for models of 0.5 GFLOPs per image or more at imgsz, and a start-up "
      "check agrees)"));
  f.push_back(string_field(
      "precision_used", "run", [](auto& c) -> auto& { return c.run.precision_used; },
      "written by fit: what precision resolved to (bf16 or fp32) on the run's hardware (a record: "
      "fit decides anew, a resume keeps its checkpoint's)"));
  {
    // The reference's `amp: true|false` selects our precision.
    auto amp = choice_field<Precision>(
        "amp", "run", [](auto& c) -> auto& { return c.run.precision; },
        {{"auto", Precision::kAuto}, {"bf16", Precision::kBF16}, {"fp32", Precision::kFP32}},
        "reference spelling of precision: true = auto, false = fp32");
    amp.yaml_true_choice = "auto";
    amp.yaml_false_choice = "fp32";
    amp.alias = true;
    f.push_back(std::move(amp));
  }
  f.push_back(string_field(
      "device", "run", [](auto& c) -> auto& { return c.run.device; },
      "cpu, 0, cuda:0 ... (empty = first GPU if any, else cpu)"));
  f.push_back(string_field(
      "project", "run", [](auto& c) -> auto& { return c.run.project; },
      "run folder parent (empty = runs/<task>)"));
  f.push_back(string_field(
      "name", "run", [](auto& c) -> auto& { return c.run.name; },
      "run folder name (train, train2, ... unless exist_ok)"));
  f.push_back(bool_field(
      "exist_ok", "run", [](auto& c) -> auto& { return c.run.exist_ok; },
      "reuse an existing run folder"));
  f.push_back(int_field(
      "save_period", "run", [](auto& c) -> auto& { return c.run.save_period; }, closed(-1, 100000),
      "also save epochN every N epochs (-1 = off)"));
  f.push_back(bool_field(
      "val", "run", [](auto& c) -> auto& { return c.run.val; }, "validate every epoch"));
  f.push_back(bool_field(
      "save_json", "run", [](auto& c) -> auto& { return c.run.save_json; },
      "fit: write the final validation's predictions.json (COCO results) to the run folder"));
  f.push_back(bool_field(
      "plots", "run", [](auto& c) -> auto& { return c.run.plots; }, "write pictures"));
  f.push_back(bool_field(
      "tensorboard", "run", [](auto& c) -> auto& { return c.run.tensorboard; },
      "write TensorBoard event files in the run folder"));
  f.push_back(float_field(
      "conf", "run", [](auto& c) -> auto& { return c.run.conf; }, closed(0, 1),
      "validation: keep detections with score > conf (reference val value 0.001)"));
  f.push_back(float_field(
      "iou", "run", [](auto& c) -> auto& { return c.run.iou; }, closed(0, 1),
      "validation NMS IoU threshold (YOLO11 and one-to-many decoding)"));
  f.push_back(int_field(
      "max_det", "run", [](auto& c) -> auto& { return c.run.max_det; }, closed(1, 100000),
      "validation: detections kept per image"));
  f.push_back(int_field(
      "val_batches", "run", [](auto& c) -> auto& { return c.run.val_batches; },
      closed(0, 100000000), "validation batches per epoch (0 = all; the seeds' short fit uses 4)"));
  {
    auto resume = string_field(
        "resume", "run", [](auto& c) -> auto& { return c.run.resume; },
        "checkpoint to resume from (a run's weights/last.ckpt); empty = start fresh");
    // The reference writes `resume: false` into args.yaml: that means "start fresh".
    resume.set = [set = resume.set](TrainConfig& c, const FieldValue& v) {
      const auto& text = std::get<std::string>(v);
      set(c, (text == "false" || text == "False") ? FieldValue(std::string()) : v);
    };
    f.push_back(std::move(resume));
  }
  f.push_back(bool_field(
      "cudnn_benchmark", "run", [](auto& c) -> auto& { return c.run.cudnn_benchmark; },
      "let cuDNN pick the fastest convolution algorithms (CUDA only)"));
  f.push_back(bool_field(
      "channels_last", "run", [](auto& c) -> auto& { return c.run.channels_last; },
      "NHWC memory format for the model and batches (CUDA only)"));
  f.push_back(bool_field(
      "static_shapes", "run", [](auto& c) -> auto& { return c.run.static_shapes; },
      "training step tensors shaped by the config alone (targets padded to max_instances, the "
      "last batch filled; no rect, no multi_scale): ready for CUDA graphs"));
  f.push_back(bool_field(
      "cuda_graph", "run", [](auto& c) -> auto& { return c.run.cuda_graph; },
      "replay the training step as CUDA graphs after eager warm-up steps (needs static_shapes, "
      "a CUDA device and one rank)"));
  f.push_back(string_field(
      "dist_backend", "run", [](auto& c) -> auto& { return c.run.dist_backend; },
      "data-parallel backend: nccl or gloo (empty = nccl on CUDA devices, gloo on the CPU)"));
  f.push_back(float_field(
      "dist_timeout", "run", [](auto& c) -> auto& { return c.run.dist_timeout; }, closed(1, 1e7),
      "data-parallel: seconds a steady-state collective (gradients, agreements, validation) "
      "waits for the other ranks before failing"));
  f.push_back(float_field(
      "dist_join_timeout", "run", [](auto& c) -> auto& { return c.run.dist_join_timeout; },
      closed(1, 1e7), "data-parallel: seconds the ranks may take to meet at the rendezvous"));
  f.push_back(float_field(
      "dist_solo_timeout", "run", [](auto& c) -> auto& { return c.run.dist_solo_timeout; },
      closed(1, 1e7),
      "data-parallel: seconds the other ranks wait for local rank 0's label and disk caches"));
  {
    auto unused = choice_field<UnusedDetection>(
        "dist_find_unused", "run", [](auto& c) -> auto& { return c.run.dist_find_unused; },
        {{"auto", UnusedDetection::kAuto},
         {"true", UnusedDetection::kEveryStep},
         {"false", UnusedDetection::kNever}},
        "data-parallel: find parameters without a gradient: auto (decided once per epoch where "
        "the task's loss reaches every parameter, else every step), true (every step, the "
        "reference's), false (never: a parameter without a gradient then hangs the job)");
    unused.yaml_true_choice = "true";
    unused.yaml_false_choice = "false";
    f.push_back(std::move(unused));
  }
  f.push_back(bool_field(
      "sync_bn", "run", [](auto& c) -> auto& { return c.run.sync_bn; },
      "data-parallel: BatchNorm statistics over all ranks (the reference keeps them per rank)"));
  return f;
}

}  // namespace trainer::core::schema
