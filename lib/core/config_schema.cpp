#include "core/config_schema.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

#include "core/edit_distance.h"

namespace trainer::core {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Range closed(double lo, double hi) {
  return Range{lo, hi, false, false};
}
Range half_open(double lo, double hi) {
  return Range{lo, hi, false, true};
}
Range open_closed(double lo, double hi) {
  return Range{lo, hi, true, false};
}

// `access` is a generic lambda `[](auto& c) -> auto& { return c.section.member; }`, usable on const
// and non-const configs, so one expression gives both getter and setter.
template <class T, class Access>
FieldSpec field(std::string key, std::string section, FieldType type, Access access,
                std::string help, std::optional<Range> range = std::nullopt) {
  FieldSpec f;
  f.key = std::move(key);
  f.section = std::move(section);
  f.type = type;
  f.help = std::move(help);
  f.range = range;
  f.get = [access](const TrainConfig& c) -> FieldValue { return FieldValue(T(access(c))); };
  f.set = [access](TrainConfig& c, const FieldValue& v) { access(c) = std::get<T>(v); };
  return f;
}

template <class Access>
FieldSpec float_field(std::string key, std::string section, Access access, Range range,
                      std::string help) {
  return field<double>(std::move(key), std::move(section), FieldType::kFloat, access,
                       std::move(help), range);
}

template <class Access>
FieldSpec int_field(std::string key, std::string section, Access access, Range range,
                    std::string help) {
  return field<int64_t>(std::move(key), std::move(section), FieldType::kInt, access,
                        std::move(help), range);
}

template <class Access>
FieldSpec bool_field(std::string key, std::string section, Access access, std::string help) {
  return field<bool>(std::move(key), std::move(section), FieldType::kBool, access, std::move(help));
}

template <class Access>
FieldSpec string_field(std::string key, std::string section, Access access, std::string help,
                       FieldType type = FieldType::kString) {
  return field<std::string>(std::move(key), std::move(section), type, access, std::move(help));
}

// An enum stored in the struct, spelled as one of `names` in YAML (matched case-insensitively).
template <class Enum, class Access>
FieldSpec choice_field(std::string key, std::string section, Access access,
                       std::vector<std::pair<std::string, Enum>> names, std::string help) {
  FieldSpec f;
  f.key = std::move(key);
  f.section = std::move(section);
  f.type = FieldType::kChoice;
  f.help = std::move(help);
  for (const auto& [name, value] : names) f.choices.push_back(name);
  f.get = [access, names](const TrainConfig& c) -> FieldValue {
    for (const auto& [name, value] : names) {
      if (access(c) == value) return name;
    }
    return std::string("?");
  };
  f.set = [access, names](TrainConfig& c, const FieldValue& v) {
    const auto& text = std::get<std::string>(v);
    for (const auto& [name, value] : names) {
      if (name == text) access(c) = value;
    }
  };
  return f;
}

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

std::vector<FieldSpec> build_fields() {
  std::vector<FieldSpec> f;
  // model
  f.push_back(string_field(
      "model", "model", [](auto& c) -> auto& { return c.model.model; },
      "yolo26n..yolo26x, yolo11n..yolo11x, or a model yaml path"));
  f.back().path_like = true;
  {
    auto pretrained = string_field(
        "pretrained", "model", [](auto& c) -> auto& { return c.model.pretrained; },
        "true (weights of a .pt/.ckpt model), false (none), or a .pt/.ckpt to transfer from");
    pretrained.path_like = true;
    pretrained.raw_yaml = true;
    pretrained.set = [set = pretrained.set](TrainConfig& c, const FieldValue& v) {
      std::string text = std::get<std::string>(v);
      if (text == "True" || text == "TRUE") text = "true";
      if (text == "False" || text == "FALSE" || text.empty()) text = "false";
      set(c, FieldValue(text));
    };
    f.push_back(std::move(pretrained));
  }
  f.push_back(bool_field(
      "cls_remap", "model", [](auto& c) -> auto& { return c.model.cls_remap; },
      "fine-tuning across datasets: match the pretrained class rows to the dataset's by class "
      "name (the reference's default)"));
  {
    auto cls_width = string_field(
        "cls_width", "model", [](auto& c) -> auto& { return c.model.cls_width; },
        "class-branch hidden width: null = from nc (the reference's), N, or [N, M] for the "
        "one-to-many and one-to-one branches; fine-tuning records the source's here");
    cls_width.int_or_int_list = true;
    f.push_back(std::move(cls_width));
  }
  {
    auto freeze = string_field(
        "freeze", "model", [](auto& c) -> auto& { return c.model.freeze; },
        "freeze layers: N = model.0..N-1, or a list of layer indices (null = none)");
    freeze.int_or_int_list = true;
    f.push_back(std::move(freeze));
  }
  f.push_back(float_field(
      "dropout", "model", [](auto& c) -> auto& { return c.model.dropout; }, half_open(0, 1),
      "classification-head dropout (reference, classify only): must stay 0 for detect and pose"));
  // data
  f.push_back(string_field(
      "data", "data", [](auto& c) -> auto& { return c.data.data; },
      "dataset yaml (path, train, val, names)", FieldType::kPath));
  f.push_back(int_field(
      "imgsz", "data", [](auto& c) -> auto& { return c.data.imgsz; }, closed(32, 8192),
      "train/val image size in pixels (rounded up to the model stride)"));
  f.push_back(int_field(
      "batch", "data", [](auto& c) -> auto& { return c.data.batch; }, closed(1, 4096),
      "images per batch"));
  f.push_back(int_field(
      "workers", "data", [](auto& c) -> auto& { return c.data.workers; }, closed(0, 256),
      "loader threads (capped by available cores)"));
  {
    auto cache = choice_field<CacheMode>(
        "cache", "data", [](auto& c) -> auto& { return c.data.cache; },
        {{"none", CacheMode::kNone}, {"ram", CacheMode::kRam}, {"disk", CacheMode::kDisk}},
        "image cache: ram keeps what fits in cache_gb (decoded images, else the image files); "
        "disk stores resized images beside the dataset (or in cache_dir) for later runs");
    cache.yaml_true_choice = "ram";
    cache.yaml_false_choice = "none";
    f.push_back(std::move(cache));
  }
  f.push_back(float_field(
      "cache_gb", "data", [](auto& c) -> auto& { return c.data.cache_gb; }, closed(0, 1e6),
      "cache: ram memory budget in GB for the machine, shared by its ranks (0 = half the "
      "available memory)"));
  f.push_back(string_field(
      "cache_dir", "data", [](auto& c) -> auto& { return c.data.cache_dir; },
      "cache: disk folder for the resized images (empty = beside each image)", FieldType::kPath));
  f.push_back(float_field(
      "decode_budget_gb", "data", [](auto& c) -> auto& { return c.data.decode_budget_gb; },
      open_closed(0, 1e6),
      "GiB of decoded image pixels in memory at once across the decoding threads (verification, "
      "caches, loader); an image needing more decodes alone"));
  f.push_back(bool_field(
      "single_cls", "data", [](auto& c) -> auto& { return c.data.single_cls; },
      "train and validate as one class 'item' (every label becomes class 0)"));
  {
    auto classes = string_field(
        "classes", "data", [](auto& c) -> auto& { return c.data.classes; },
        "train and validate on these class ids only: N or [i, j] (null = all)");
    classes.int_or_int_list = true;
    f.push_back(std::move(classes));
  }
  f.push_back(float_field(
      "fraction", "data", [](auto& c) -> auto& { return c.data.fraction; }, open_closed(0, 1e12),
      "training images used: a ratio in (0, 1] or a whole number of images"));
  f.push_back(bool_field(
      "rect", "data", [](auto& c) -> auto& { return c.data.rect; },
      "rectangular training batches (sorted by aspect ratio; no shuffle, no mosaic)"));
  f.push_back(bool_field(
      "overlap_mask", "data", [](auto& c) -> auto& { return c.data.overlap_mask; },
      "segmentation: one index mask per image (smaller objects over larger) instead of one per "
      "object"));
  f.push_back(int_field(
      "mask_ratio", "data", [](auto& c) -> auto& { return c.data.mask_ratio; }, closed(1, 64),
      "segmentation: ground-truth masks at imgsz / mask_ratio"));
  f.push_back(int_field(
      "max_instances", "data", [](auto& c) -> auto& { return c.data.max_instances; },
      closed(1, 100000),
      "static_shapes: objects per training sample after augmentation; beyond it the smallest "
      "are dropped (counted in the log)"));
  // optimizer
  {
    std::vector<std::pair<std::string, std::string>> kinds;
    for (const char* name : {"auto", "MuSGD", "SGD", "AdamW"}) kinds.emplace_back(name, name);
    f.push_back(choice_field<std::string>(
        "optimizer", "optim", [](auto& c) -> auto& { return c.optim.optimizer; }, kinds,
        "auto picks MuSGD for long runs (>10k iterations), AdamW otherwise"));
  }
  f.push_back(float_field(
      "lr0", "optim", [](auto& c) -> auto& { return c.optim.lr0; }, open_closed(0, 10),
      "initial learning rate"));
  f.push_back(float_field(
      "momentum", "optim", [](auto& c) -> auto& { return c.optim.momentum; }, half_open(0, 1),
      "SGD momentum / Adam beta1"));
  f.push_back(float_field(
      "weight_decay", "optim", [](auto& c) -> auto& { return c.optim.weight_decay; }, closed(0, 1),
      "weight decay (scaled by batch*accumulate/nbs)"));
  f.push_back(int_field(
      "nbs", "optim", [](auto& c) -> auto& { return c.optim.nbs; }, closed(1, 65536),
      "nominal batch size for gradient accumulation"));
  f.push_back(choice_field<OptimizerImpl>(
      "optimizer_impl", "optim", [](auto& c) -> auto& { return c.optim.impl; },
      {{"scalar", OptimizerImpl::kScalar},
       {"batched", OptimizerImpl::kBatched},
       {"padded", OptimizerImpl::kPadded}},
      "MuSGD schedule: scalar (oracle), batched (exact shapes), padded (mixed widths)"));
  f.push_back(float_field(
      "muon_gain", "optim", [](auto& c) -> auto& { return c.optim.muon_gain; }, closed(0, 100),
      "MuSGD: lr multiplier of the Muon part"));
  f.push_back(float_field(
      "sgd_gain", "optim", [](auto& c) -> auto& { return c.optim.sgd_gain; }, closed(0, 100),
      "MuSGD: lr multiplier of the SGD part"));
  f.push_back(int_field(
      "ns_steps", "optim", [](auto& c) -> auto& { return c.optim.ns_steps; }, closed(1, 100),
      "Newton-Schulz iterations"));
  {
    auto coeffs = field<std::vector<double>>(
        "ns_coefficients", "optim", FieldType::kFloatList,
        [](auto& c) -> auto& { return c.optim.ns_coefficients; }, "Newton-Schulz (a, b, c)",
        closed(-100, 100));
    coeffs.list_size = 3;
    f.push_back(std::move(coeffs));
  }
  f.push_back(choice_field<NsDtype>(
      "ns_dtype", "optim", [](auto& c) -> auto& { return c.optim.ns_dtype; },
      {{"bf16", NsDtype::kBF16}, {"fp32", NsDtype::kFP32}},
      "Newton-Schulz arithmetic (reference: bf16)"));
  f.push_back(float_field(
      "max_grad_norm", "optim", [](auto& c) -> auto& { return c.optim.max_grad_norm; },
      open_closed(0, kInf), "global L2 gradient clipping norm"));
  // schedule
  f.push_back(int_field(
      "epochs", "schedule", [](auto& c) -> auto& { return c.schedule.epochs; }, closed(1, 100000),
      "training epochs"));
  f.push_back(int_field(
      "patience", "schedule", [](auto& c) -> auto& { return c.schedule.patience; },
      closed(0, 100000), "epochs without improvement before early stop (0 = never)"));
  f.push_back(int_field(
      "close_mosaic", "schedule", [](auto& c) -> auto& { return c.schedule.close_mosaic; },
      closed(0, 100000), "turn mosaic off for the last N epochs"));
  f.push_back(float_field(
      "warmup_epochs", "schedule", [](auto& c) -> auto& { return c.schedule.warmup_epochs; },
      closed(0, 1000), "warmup length in epochs (fractions allowed)"));
  f.push_back(float_field(
      "warmup_momentum", "schedule", [](auto& c) -> auto& { return c.schedule.warmup_momentum; },
      half_open(0, 1), "momentum at the start of warmup"));
  f.push_back(float_field(
      "warmup_bias_lr", "schedule", [](auto& c) -> auto& { return c.schedule.warmup_bias_lr; },
      closed(0, 10), "bias-group lr at the start of warmup"));
  f.push_back(float_field(
      "time", "schedule", [](auto& c) -> auto& { return c.schedule.time; }, closed(0, 1e6),
      "hours to train (0 or null = off); overrides epochs, re-estimated after every epoch"));
  f.push_back(bool_field(
      "cos_lr", "schedule", [](auto& c) -> auto& { return c.schedule.cos_lr; },
      "cosine instead of linear lr decay"));
  f.push_back(float_field(
      "lrf", "schedule", [](auto& c) -> auto& { return c.schedule.lrf; }, open_closed(0, 1),
      "final lr as a fraction of lr0"));
  // ema
  f.push_back(choice_field<EmaImpl>(
      "ema_impl", "ema", [](auto& c) -> auto& { return c.ema.impl; },
      {{"scalar", EmaImpl::kScalar}, {"foreach", EmaImpl::kForeach}},
      "EMA schedule: scalar (oracle) or foreach (one lerp per dtype bucket)"));
  f.push_back(float_field(
      "ema_decay", "ema", [](auto& c) -> auto& { return c.ema.decay; }, half_open(0, 1),
      "EMA decay ceiling"));
  f.push_back(float_field(
      "ema_tau", "ema", [](auto& c) -> auto& { return c.ema.tau; }, open_closed(0, kInf),
      "EMA decay ramp in updates"));
  // loss
  f.push_back(float_field(
      "box", "loss", [](auto& c) -> auto& { return c.loss.box; }, closed(0, 1000),
      "box (CIoU) loss gain"));
  f.push_back(float_field(
      "cls", "loss", [](auto& c) -> auto& { return c.loss.cls; }, closed(0, 1000),
      "classification loss gain"));
  f.push_back(float_field(
      "dfl", "loss", [](auto& c) -> auto& { return c.loss.dfl; }, closed(0, 1000),
      "DFL (YOLO11) / L1 (YOLO26) loss gain"));
  f.push_back(float_field(
      "pose", "loss", [](auto& c) -> auto& { return c.loss.pose; }, closed(0, 1000),
      "keypoint location loss gain (pose)"));
  f.push_back(float_field(
      "kobj", "loss", [](auto& c) -> auto& { return c.loss.kobj; }, closed(0, 1000),
      "keypoint visibility loss gain (pose)"));
  f.push_back(float_field(
      "rle", "loss", [](auto& c) -> auto& { return c.loss.rle; }, closed(0, 1000),
      "residual log-likelihood loss gain (YOLO26 pose)"));
  f.push_back(float_field(
      "angle", "loss", [](auto& c) -> auto& { return c.loss.angle; }, closed(0, 1000),
      "angle loss gain (OBB)"));
  // augment
  f.push_back(float_field(
      "hsv_h", "augment", [](auto& c) -> auto& { return c.augment.hsv_h; }, closed(0, 1),
      "hue gain (fraction)"));
  f.push_back(float_field(
      "hsv_s", "augment", [](auto& c) -> auto& { return c.augment.hsv_s; }, closed(0, 1),
      "saturation gain (fraction)"));
  f.push_back(float_field(
      "hsv_v", "augment", [](auto& c) -> auto& { return c.augment.hsv_v; }, closed(0, 1),
      "value gain (fraction)"));
  f.push_back(float_field(
      "degrees", "augment", [](auto& c) -> auto& { return c.augment.degrees; }, closed(0, 180),
      "rotation range (+/- degrees)"));
  f.push_back(float_field(
      "translate", "augment", [](auto& c) -> auto& { return c.augment.translate; }, closed(0, 1),
      "translation range (+/- fraction)"));
  f.push_back(float_field(
      "scale", "augment", [](auto& c) -> auto& { return c.augment.scale; }, half_open(0, 1),
      "scale range (+/- gain)"));
  f.push_back(float_field(
      "shear", "augment", [](auto& c) -> auto& { return c.augment.shear; }, closed(0, 90),
      "shear range (+/- degrees)"));
  f.push_back(float_field(
      "perspective", "augment", [](auto& c) -> auto& { return c.augment.perspective; },
      closed(0, 0.001), "perspective range"));
  f.push_back(float_field(
      "flipud", "augment", [](auto& c) -> auto& { return c.augment.flipud; }, closed(0, 1),
      "vertical flip probability"));
  f.push_back(float_field(
      "fliplr", "augment", [](auto& c) -> auto& { return c.augment.fliplr; }, closed(0, 1),
      "horizontal flip probability"));
  {
    auto multi_scale = float_field(
        "multi_scale", "augment", [](auto& c) -> auto& { return c.augment.multi_scale; },
        half_open(0, 1), "each batch at a random size in imgsz * [1 - f, 1 + f] (0 = off)");
    multi_scale.float_from_bool = std::array<double, 2>{0.0, 0.5};  // 8.3's bool meant +-50%
    f.push_back(std::move(multi_scale));
  }
  f.push_back(float_field(
      "mosaic", "augment", [](auto& c) -> auto& { return c.augment.mosaic; }, closed(0, 1),
      "mosaic probability"));
  f.push_back(float_field(
      "mixup", "augment", [](auto& c) -> auto& { return c.augment.mixup; }, closed(0, 1),
      "mixup probability"));
  f.push_back(float_field(
      "copy_paste", "augment", [](auto& c) -> auto& { return c.augment.copy_paste; }, closed(0, 1),
      "segmentation/OBB: fraction of eligible objects pasted (0 = off)"));
  f.push_back(choice_field<CopyPasteMode>(
      "copy_paste_mode", "augment", [](auto& c) -> auto& { return c.augment.copy_paste_mode; },
      {{"flip", CopyPasteMode::kFlip}, {"mixup", CopyPasteMode::kMixup}},
      "copy_paste: mirrored copies of the image's own objects (flip) or another sample's (mixup)"));
  // run
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
      "natively and a start-up check agrees with fp32)"));
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

// Keys of the reference's default.yaml that we accept so that its args.yaml loads, but do not use:
// predict/export/track settings, classification and depth tasks, distillation, quantization. Those
// of 8.4.190, `save_dir` (which its args.yaml adds), and older versions' half, int8, keras,
// crop_fraction, label_smoothing, end2end. tests/core/test_config_reference_keys.cpp lists them.
constexpr std::string_view kReferenceOnlyKeys[] = {
    "mode",        "save",          "verbose",
    "profile",     "compile",       "split",
    "half",        "dnn",           "source",
    "vid_stride",  "stream_buffer", "visualize",
    "augment",     "agnostic_nms",  "retina_masks",
    "embed",       "show",          "save_frames",
    "save_txt",    "save_conf",     "save_crop",
    "show_labels", "show_conf",     "show_boxes",
    "line_width",  "format",        "keras",
    "optimize",    "int8",          "dynamic",
    "simplify",    "opset",         "workspace",
    "bgr",         "cutmix",        "auto_augment",
    "erasing",     "cfg",           "tracker",
    "save_dir",    "crop_fraction", "label_smoothing",
    "cls_pw",      "end2end",       "distill_model",
    "dis",         "quantize",      "dlog",
    "dgrad",       "dlam",
};

}  // namespace

bool Range::contains(double v) const {
  if (std::isnan(v)) return false;
  const bool above = min_open ? v > min : v >= min;
  const bool below = max_open ? v < max : v <= max;
  return above && below;
}

std::string Range::describe() const {
  auto num = [](double v) {
    if (std::isinf(v)) return std::string(v > 0 ? "inf" : "-inf");
    return format_value(FieldValue(v));
  };
  return std::string(min_open ? "(" : "[") + num(min) + ", " + num(max) + (max_open ? ")" : "]");
}

std::string FieldSpec::expectation() const {
  const std::string in = range ? " in " + range->describe() : "";
  switch (type) {
    case FieldType::kBool:
      return "true or false";
    case FieldType::kInt:
      return "an integer" + in;
    case FieldType::kFloat:
      return "a number" + in;
    case FieldType::kString:
      return int_or_int_list ? "an integer or a list of integers" : "a string";
    case FieldType::kPath:
      return "a file path";
    case FieldType::kFloatList:
      return "a list of " + std::to_string(list_size) + " numbers" + (range ? ", each" + in : "");
    case FieldType::kChoice: {
      std::string s = "one of: ";
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
      if (yaml_true_choice) s += " (true = " + *yaml_true_choice + ")";
      if (yaml_false_choice) s += " (false = " + *yaml_false_choice + ")";
      return s;
    }
  }
  return "a value";
}

const std::vector<FieldSpec>& config_fields() {
  static const std::vector<FieldSpec> fields = build_fields();
  return fields;
}

const FieldSpec* find_field(std::string_view key) {
  for (const auto& f : config_fields()) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::vector<std::string_view> reference_only_keys() {
  return {std::begin(kReferenceOnlyKeys), std::end(kReferenceOnlyKeys)};
}

bool is_reference_only_key(std::string_view key) {
  return std::find(std::begin(kReferenceOnlyKeys), std::end(kReferenceOnlyKeys), key) !=
         std::end(kReferenceOnlyKeys);
}

std::string closest_key(std::string_view key) {
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  auto consider = [&](std::string_view candidate) {
    const size_t d = edit_distance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  };
  for (const auto& f : config_fields()) consider(f.key);
  for (auto k : kReferenceOnlyKeys) consider(k);
  return best;
}

std::string format_value(const FieldValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
      std::ostringstream os;
      os.precision(17);
      // Shortest text that reads back to the same double.
      for (int p = 6; p <= 17; ++p) {
        std::ostringstream t;
        t.precision(p);
        t << d;
        if (std::stod(t.str()) == d) return t.str();
      }
      os << d;
      return os.str();
    }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const std::vector<double>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + (*this)(v[i]);
      return s + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

bool operator==(const TrainConfig& a, const TrainConfig& b) {
  for (const auto& f : config_fields()) {
    if (f.get(a) != f.get(b)) return false;
  }
  return true;
}

}  // namespace trainer::core
