// The typed configuration of a training run.
//
// Why: every setting lives in one struct tree so that code reads `cfg.optim.lr0`, not strings, and
// so that defaults are written once. Flat YAML keys (the reference trainer's names, so a user's
// Ultralytics `args.yaml` loads) are mapped onto these members by `config_schema.cpp`; our own
// additions use a prefix naming their section (`optimizer_impl`, `ema_impl`, ...).
// Defaults equal the reference trainer's `default.yaml` unless a comment says otherwise.
// No LibTorch here: this header is included by code that must compile fast.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/task.h"

namespace trainer::core {

enum class OptimizerImpl { kScalar, kBatched, kPadded };
enum class EmaImpl { kScalar, kForeach };
// kAuto: bf16 where the device runs it natively and the start-up check agrees, else fp32
// (engine/precision/precision_choice.h).
enum class Precision { kAuto, kBF16, kFP32 };
enum class NsDtype { kBF16, kFP32 };
// kRam: what fits in `cache_gb` (decoded resized images, else the encoded files;
// data/image_store.h); kDisk: resized images stored once in files beside the dataset
// (data/disk_cache.h).
enum class CacheMode { kNone, kRam, kDisk };
// Which head scores YOLO26 at validation: auto/true = the one-to-many head with NMS (8.4.190's
// default, `nms: null`), false = the NMS-free one-to-one top-k. YOLO11 always uses NMS.
enum class NmsMode { kAuto, kOn, kOff };
// Data-parallel unused-parameter detection: decided per epoch where the task allows (auto), every
// step (the reference's find_unused_parameters=True), or never.
enum class UnusedDetection { kAuto, kEveryStep, kNever };
// copy_paste: paste mirrored copies of the image's own objects, or another sample's objects.
enum class CopyPasteMode { kFlip, kMixup };

struct ModelConfig {
  // A built-in name (yolo26n..x, yolo11n..x, with a task suffix), or a weights file (.pt / .ckpt)
  // whose architecture it records (engine/checkpoint/weights_source.h). A custom model yaml path
  // is refused (model/model_spec.cpp) until model yaml files are read.
  std::string model = "yolo26n";
  // "true": the weights of `model` when it is a weights file (built-in names have no downloadable
  // weights here); "false": none; otherwise a .pt/.ckpt path whose weights are transferred.
  std::string pretrained = "true";
  // Fine-tuning across datasets: pretrained class rows matched to the dataset's by class name
  // (8.4.190's cls_remap, model/fine_tune_transfer.h).
  bool cls_remap = true;
  // The Detect head's class-branch hidden widths: "" the reference's default from nc, "N", or
  // "[N, M]" (one-to-many, one-to-one). Ours: fine-tuning records the source's widths here when
  // it rebuilds the branches (model/class_widths.h), so val, predict and resume build them.
  std::string cls_width;
  // Ours, a record: a run that starts from a weights file writes the architecture that file held
  // here (yolo26n, yolo11s-pose), so its args.yaml and checkpoints describe their model even when
  // that file is moved or deleted. Read from a run's record only; fit builds from `model`.
  std::string architecture;
  // Layers to freeze: "" none, "N" model.0..N-1, "[i, j, ...]" those layer indices.
  std::string freeze;
  double dropout = 0.0;  // the reference's classify-head dropout: refused above 0 for our tasks
};

struct DataConfig {
  std::string data;  // dataset yaml (Ultralytics form); empty only for commands that need no data
  int64_t imgsz = 640;
  int64_t batch = 16;
  int64_t workers = 8;  // capped at run time by the cores available (see the loader)
  CacheMode cache = CacheMode::kNone;
  // RAM cache budget in GB; 0 = auto (half the available memory, shared by the local ranks).
  double cache_gb = 0.0;
  // Where cache: disk keeps its files; "" = beside each image, as the reference does.
  std::string cache_dir;
  // GiB of decoded pixels in memory at once, shared by image verification, cache building and the
  // loader's workers (data/decode_budget.h); an image needing more decodes alone. Ours.
  double decode_budget_gb = 1.0;
  bool single_cls = false;  // every class becomes class 0 "item" (both splits)
  std::string classes;      // "" all, "N" or "[i, j]": train and validate on those classes only
  double fraction = 1.0;    // training images used: a ratio in (0, 1], or a count above 1
  bool rect = false;        // rectangular training batches (sorted by aspect, no shuffle/mosaic)
  // Segmentation ground truth: one index image per image, smaller objects drawn over larger ones
  // (true), or one 0/1 mask per object; rasterised at imgsz / mask_ratio.
  bool overlap_mask = true;
  int64_t mask_ratio = 4;
  // Static shapes only: objects per training sample after augmentation; a sample with more loses
  // its smallest (loss/instance_cap.h, counted in the epoch's log). Ours.
  int64_t max_instances = 100;
};

struct ScheduleConfig {
  int64_t epochs = 100;
  int64_t patience = 100;
  int64_t close_mosaic = 10;
  double warmup_epochs = 3.0;
  double warmup_momentum = 0.8;
  double warmup_bias_lr = 0.1;
  bool cos_lr = false;
  double lrf = 0.01;
  double time = 0.0;  // hours; > 0 overrides epochs (engine/time_budget.h)
};

struct OptimConfig {
  // auto, MuSGD, SGD or AdamW as the reference spells them (the config's vocabulary); lib/optim,
  // which owns the kinds, parses it (optim::optimizer_kind_from_name).
  std::string optimizer = "auto";
  double lr0 = 0.01;
  double momentum = 0.937;
  double weight_decay = 0.0005;
  int64_t nbs = 64;
  // Our additions (reference constants made configurable).
  OptimizerImpl impl = OptimizerImpl::kPadded;
  double muon_gain = 0.2;  // the trainer's MuSGD(muon=0.2, sgd=1.0)
  double sgd_gain = 1.0;
  int64_t ns_steps = 5;
  std::vector<double> ns_coefficients{3.4445, -4.7750, 2.0315};  // (a, b, c), length 3
  NsDtype ns_dtype = NsDtype::kBF16;
  double max_grad_norm = 10.0;
};

struct EmaConfig {
  EmaImpl impl = EmaImpl::kForeach;
  double decay = 0.9999;
  double tau = 2000.0;
};

struct LossConfig {
  double box = 7.5;
  double cls = 0.5;
  double dfl = 1.5;
  double pose = 12.0;  // keypoint location loss gain (pose models)
  double kobj = 1.0;   // keypoint visibility BCE gain (pose models, kpt_shape [K, 3])
  double rle = 1.0;    // residual log-likelihood loss gain (YOLO26 pose models)
  double angle = 1.0;  // angle loss gain (OBB models, YOLO26 and YOLO11)
};

struct AugmentConfig {
  double multi_scale = 0.0;  // batch size drawn from imgsz * [1 - f, 1 + f] (engine/multi_scale.h)
  double hsv_h = 0.015;
  double hsv_s = 0.7;
  double hsv_v = 0.4;
  double degrees = 0.0;
  double translate = 0.1;
  double scale = 0.5;
  double shear = 0.0;
  double perspective = 0.0;
  double flipud = 0.0;
  double fliplr = 0.5;
  double mosaic = 1.0;
  double mixup = 0.0;
  // Segmentation and OBB (samples with polygons): the fraction of eligible objects pasted
  // (augment/copy_paste.h); mixup mode also applies it with this probability. Off after
  // close_mosaic, as mosaic.
  double copy_paste = 0.0;
  CopyPasteMode copy_paste_mode = CopyPasteMode::kFlip;
};

struct RunConfig {
  // The `task` key; unset = from the model name (core::resolve_task). Loading a config resolves
  // it, so a loaded config always holds the run's task.
  std::optional<Task> task;
  int64_t seed = 0;
  bool deterministic = true;
  // Reference: amp=True (fp16 + scaler on CUDA, fp32 on CPU); ours: BF16 autocast (no scaler)
  // where the device is fast at it and the start-up check passes.
  Precision precision = Precision::kAuto;
  // Ours, a record: what `precision` resolved to in the run that wrote it ("bf16" / "fp32"; empty
  // before a run decided). Fit decides anew from the hardware; a resume keeps its checkpoint's.
  std::string precision_used;
  std::string device;   // "" = first CUDA device if present, else cpu
  std::string project;  // "" = runs/<task>
  std::string name = "train";
  bool exist_ok = false;
  int64_t save_period = -1;
  bool val = true;
  bool plots = true;
  bool tensorboard = true;       // events.out.tfevents.* in the run folder (ours)
  bool save_json = false;        // fit: predictions.json of the final validation
  double conf = 0.001;           // validation confidence threshold
  double iou = 0.7;              // validation NMS IoU
  int64_t max_det = 300;         // validation detections per image
  NmsMode nms = NmsMode::kAuto;  // YOLO26 val head: NMS on the one-to-many head unless false
  int64_t val_batches = 0;       // validation batches per epoch (0 = the whole split)
  std::string resume;            // checkpoint to resume from ("" = start fresh)
  bool cudnn_benchmark = false;  // cuDNN autotuning (CUDA only)
  bool channels_last = false;    // NHWC memory format for the model (CUDA only)
  // Every tensor of a training step shaped by the config alone (targets padded to max_instances,
  // masked assigner and losses, the last batch filled): what a CUDA graph needs. Ours.
  bool static_shapes = false;
  // Replays the static step as CUDA graphs after a few eager warm-up steps (needs static_shapes,
  // a CUDA device, one rank; engine/static_step/cuda_graph_step.h). Ours.
  bool cuda_graph = false;
  // Data-parallel training (several ranks: torchrun or device=0,1,...).
  std::string dist_backend;  // "" = nccl for CUDA devices, gloo for the CPU
  // Seconds each kind of wait may take before the rank fails, naming the wait (the reference has
  // one 3 h timeout for all, so a hung peer costs 3 h of every GPU):
  double dist_timeout = 600;        // steady-state collectives: gradients, agreements, validation
  double dist_join_timeout = 900;   // the ranks meeting at the rendezvous
  double dist_solo_timeout = 3600;  // a peer's solo work: local rank 0 building label/disk caches
  UnusedDetection dist_find_unused = UnusedDetection::kAuto;
  bool sync_bn = false;  // BatchNorm statistics over all ranks (the reference: per rank)
};

struct TrainConfig {
  ModelConfig model;
  DataConfig data;
  ScheduleConfig schedule;
  OptimConfig optim;
  EmaConfig ema;
  LossConfig loss;
  AugmentConfig augment;
  RunConfig run;
};

bool operator==(const TrainConfig& a, const TrainConfig& b);
inline bool operator!=(const TrainConfig& a, const TrainConfig& b) {
  return !(a == b);
}

}  // namespace trainer::core
