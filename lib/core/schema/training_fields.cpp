// Tested by tests/core/test_config_defaults.cpp: optimizer/schedule/loss/augment defaults equal the
//   reference and lie in their ranges.
// The rows of the configuration table that shape training: model, data, optimizer, schedule, EMA,
// loss and augmentation (see core/config_schema.h for why there is one table).
#include "core/schema/field_builders.h"

namespace trainer::core::schema {

std::vector<FieldSpec> training_fields() {
  std::vector<FieldSpec> f;

  // model
  f.push_back(string_field(
      "model", "model", [](auto& c) -> auto& { return c.model.model; },
      "yolo26n..yolo26x, yolo11n..yolo11x (-pose, -seg, -obb), or a .pt/.ckpt weights file"));
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
  f.push_back(string_field(
      "architecture", "model", [](auto& c) -> auto& { return c.model.architecture; },
      "written by a run that starts from a weights file: the architecture it held, so the run's "
      "files describe their model without that file (a record: fit builds from model)"));
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
  return f;
}

}  // namespace trainer::core::schema
