// See validator.h.
#include "engine/validator.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "core/atomic_file.h"
#include "core/autocast_guard.h"
#include "core/error.h"
#include "data/coco_dataset.h"
#include "data/loader_options.h"
#include "engine/device/device.h"
#include "engine/device/memory_format.h"
#include "engine/run_dataset.h"
#include "engine/task/segment_mask_validation.h"
#include "engine/task/task_definition.h"
#include "eval/keypoint_similarity.h"
#include "eval/rle.h"
#include "loss/keypoint_sigmas.h"
#include "model/postprocess.h"

namespace trainer::engine {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Restores a module's train/eval mode on scope exit.
class ModeGuard {
 public:
  explicit ModeGuard(torch::nn::Module& m) : module_(m), was_training_(m.is_training()) {
    module_.eval();
  }
  ~ModeGuard() { module_.train(was_training_); }

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

// Images per forward on the CPU (measured on coco128 at 640, batch 16, 2 cores: 1 -> 49 ms an
// image and 843 MB peak RSS, 2 -> 48 ms / 879 MB, 4 -> 57 ms / 1.17 GB, 16 -> 86 ms / 1.54 GB).
constexpr int64_t kCpuForwardChunk = 2;

// The forward of `images` in slices of `chunk` images (0: all at once), the outputs joined back
// into one batch. On the CPU a batch of 16 at 640 px moves ~1 GB of activations through memory
// the caches cannot hold; slices of a few images give the same outputs (every layer is per image
// in eval mode) faster and with a fraction of the peak memory.
model::DetectOutput forward_in_chunks(model::DetectionModelImpl& model, const at::Tensor& images,
                                      int64_t chunk) {
  if (chunk <= 0 || images.size(0) <= chunk) return model.forward_train(images);
  std::vector<model::DetectOutput> parts;
  for (int64_t start = 0; start < images.size(0); start += chunk) {
    parts.push_back(model.forward_train(images.slice(0, start, start + chunk)));
  }
  model::DetectOutput out;
  for (const auto field : model::DetectOutput::fields()) {
    const size_t levels = (parts[0].*field).size();
    for (size_t level = 0; level < levels; ++level) {
      std::vector<at::Tensor> slices;
      for (const auto& part : parts) slices.push_back((part.*field)[level]);
      (out.*field).push_back(torch::cat(slices, 0));
    }
  }
  return out;
}

std::array<float, 4> to_pixels_xyxy(const data::NormBox& b, int width, int height) {
  const float cx = b[0] * width, cy = b[1] * height, w = b[2] * width, h = b[3] * height;
  return {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
}

}  // namespace

std::vector<LetterboxedTruth> letterboxed_truth(const at::Tensor& labels, int64_t batch_size,
                                                float width, float height,
                                                const at::Tensor& keypoints,
                                                const at::Tensor& rboxes) {
  std::vector<LetterboxedTruth> out(static_cast<size_t>(batch_size));
  const at::Tensor rows = labels.to(torch::kCPU, torch::kFloat).contiguous();
  const bool oriented = rboxes.defined() && rboxes.dim() == 2 && rboxes.size(1) == 5;
  if (oriented && rboxes.size(0) != rows.size(0)) {
    throw std::logic_error("letterboxed_truth: rotated boxes and labels have different rows");
  }
  const at::Tensor rotated =
      oriented ? rboxes.to(torch::kCPU, torch::kFloat).contiguous() : at::Tensor();
  const float* rb = oriented ? rotated.data_ptr<float>() : nullptr;
  const bool pose = keypoints.defined() && keypoints.dim() == 3 && keypoints.size(1) > 0;
  if (pose && keypoints.size(0) != rows.size(0)) {
    throw std::logic_error("letterboxed_truth: keypoints and labels have different rows");
  }
  const at::Tensor points =
      pose ? keypoints.to(torch::kCPU, torch::kFloat).contiguous() : at::Tensor();
  const int64_t k_values = pose ? keypoints.size(1) * 3 : 0;
  const float* r = rows.data_ptr<float>();
  const float* p = pose ? points.data_ptr<float>() : nullptr;
  for (int64_t k = 0; k < rows.size(0); ++k, r += 6) {
    const auto image = static_cast<size_t>(r[0]);
    if (image >= out.size()) throw std::logic_error("letterboxed_truth: label row past the batch");
    const float cx = r[2] * width, cy = r[3] * height, w = r[4] * width, h = r[5] * height;
    out[image].boxes.push_back({cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2});
    out[image].classes.push_back(static_cast<int>(r[1]));
    if (rb) {
      const float* q = rb + 5 * k;
      out[image].rboxes.push_back(
          {q[0] * width, q[1] * height, q[2] * width, q[3] * height, static_cast<double>(q[4])});
    }
    for (int64_t v = 0; v < k_values; v += 3) {
      const float* point = p + k * k_values + v;
      out[image].keypoints.insert(out[image].keypoints.end(),
                                  {point[0] * width, point[1] * height, point[2]});
    }
  }
  return out;
}

Validator::Validator(std::shared_ptr<const data::DatasetIndex> val_set,
                     const data::DatasetSpec& spec, const core::TrainConfig& config,
                     c10::Device device, bool standalone)
    : val_set_(std::move(val_set)), config_(config), device_(device) {
  if (spec.kpt_shape) {
    kpt_sigmas_ = loss::default_keypoint_sigmas((*spec.kpt_shape)[0], (*spec.kpt_shape)[1],
                                                spec.kpt_oks_sigmas);
  }
  auto options = data::val_loader_options(config, standalone);
  options.show_progress = false;
  loader_ = std::make_unique<data::Loader>(*val_set_, options);
  const int nc = val_set_->nc();

  // Category ids: a json dataset keeps its own ids; 80 classes use the COCO 91-id map; otherwise
  // class + 1 (COCO ids start at 1).
  std::optional<data::CocoFile> json;
  // Under classes/single_cls the json holds other labels than the ones scored: ground truth from
  // the selected labels instead.
  if (spec.val_json && !selects_labels(config)) {
    json = data::read_coco_json(spec.root / *spec.val_json);
  }
  if (json) {
    const auto map = data::coco_class_map(*json, nc);
    const int64_t known = static_cast<int64_t>(map.ids.size());
    const int64_t next_free = map.ids.empty() ? 1 : map.ids.back() + 1;
    for (int c = 0; c < nc; ++c) {
      if (map.coco91) {
        category_ids_.push_back(data::coco80_to_coco91()[c]);
      } else if (c < known) {
        category_ids_.push_back(map.ids[static_cast<size_t>(c)]);
      } else {  // a class the json has no category for: an unused id (it has no ground truth)
        category_ids_.push_back(next_free + (c - known));
      }
    }
    if (!map.coco91 && known < nc) {
      spdlog::warn(
          "{}: {} categories for the dataset's {} classes; classes {}..{} have no ground truth "
          "there and get ids {}..{} in predictions.json",
          json->source.string(), known, nc, known, nc - 1, next_free, next_free + nc - 1 - known);
    }
  } else {
    for (int c = 0; c < nc; ++c) {
      category_ids_.push_back(nc == 80 ? data::coco80_to_coco91()[c] : c + 1);
    }
  }
  // Image ids: the json's, or numeric file stems when they are unique, else the dataset index.
  std::set<int64_t> seen;
  bool stems_usable = true;
  for (const auto& item : val_set_->items) {
    if (item.coco_image_id < 0 || !seen.insert(item.coco_image_id).second) stems_usable = false;
  }
  for (size_t i = 0; i < val_set_->size(); ++i) {
    image_ids_.push_back(stems_usable ? val_set_->items[i].coco_image_id : static_cast<int64_t>(i));
  }

  if (json && stems_usable) {
    // The original annotations (segmentation areas, crowd regions) restricted to usable images.
    ground_truth_.source = json->source;
    ground_truth_.categories = json->categories;
    // Classes the json has no category for get theirs here, without ground truth: their
    // detections then count as pycocotools counts those of any category without ground truth
    // (not at all), instead of being refused as unknown ids.
    const std::set<int64_t> json_ids = [&] {
      std::set<int64_t> ids;
      for (const auto& category : json->categories) ids.insert(category.id);
      return ids;
    }();
    for (int c = 0; c < nc; ++c) {
      if (!json_ids.count(category_ids_[c])) {
        ground_truth_.categories.push_back({category_ids_[c], val_set_->names[c], ""});
      }
    }
    for (const auto& image : json->images) {
      if (seen.count(image.id)) ground_truth_.images.push_back(image);
    }
    for (const auto& a : json->annotations) {
      if (seen.count(a.image_id)) ground_truth_.annotations.push_back(a);
    }
    return;
  }
  // Built from the labels: box areas, crowd boxes kept aside by the dataset.
  ground_truth_.source = val_set_->source;
  for (int c = 0; c < nc; ++c) {
    ground_truth_.categories.push_back({category_ids_[c], val_set_->names[c], ""});
  }
  int64_t annotation_id = 1;
  for (size_t i = 0; i < val_set_->size(); ++i) {
    const auto& item = val_set_->items[i];
    ground_truth_.images.push_back(
        {image_ids_[i], item.image.filename().string(), item.width, item.height});
    const size_t k_values = static_cast<size_t>(val_set_->keypoints_per_box) * 3;
    auto add = [&](const data::NormBox& b, int cls, bool crowd, const float* points,
                   const std::vector<float>* outline) {
      const auto xyxy = to_pixels_xyxy(b, item.width, item.height);
      data::CocoAnnotation a;
      a.id = annotation_id++;
      a.image_id = image_ids_[i];
      a.category_id = category_ids_.at(cls);
      a.bbox = {xyxy[0], xyxy[1], xyxy[2] - xyxy[0], xyxy[3] - xyxy[1]};
      a.area = a.bbox[2] * a.bbox[3];
      a.iscrowd = crowd;
      if (outline && outline->size() >= 6) {
        // Segmentation: the outline in original pixels; its area (shoelace) as COCO's "area".
        std::vector<double> polygon;
        for (size_t v = 0; v + 1 < outline->size(); v += 2) {
          polygon.push_back((*outline)[v] * item.width);
          polygon.push_back((*outline)[v + 1] * item.height);
        }
        double twice = 0;
        for (size_t v = 0; v < polygon.size(); v += 2) {
          const size_t next = (v + 2) % polygon.size();
          twice += polygon[v] * polygon[next + 1] - polygon[next] * polygon[v + 1];
        }
        a.area = std::abs(twice) / 2;
        a.segmentation.polygons = {std::move(polygon)};
      }
      if (k_values > 0) {  // pose: the points in original pixels, as a person_keypoints file
        a.num_keypoints = 0;
        for (size_t v = 0; v < k_values; v += 3) {
          const double visibility = points ? points[v + 2] : 0.0;
          a.keypoints.push_back(points ? points[v] * item.width : 0.0);
          a.keypoints.push_back(points ? points[v + 1] * item.height : 0.0);
          a.keypoints.push_back(visibility);
          if (visibility > 0) ++a.num_keypoints;
        }
      }
      ground_truth_.annotations.push_back(a);
    };
    const bool has_points = k_values > 0 && item.keypoints.size() == item.boxes.size() * k_values;
    for (size_t k = 0; k < item.boxes.size(); ++k) {
      add(item.boxes[k], item.classes[k], false,
          has_points ? item.keypoints.data() + k * k_values : nullptr,
          item.segments.size() == item.boxes.size() &&
                  val_set_->polygons == data::PolygonKind::kOutlines
              ? &item.segments[k]
              : nullptr);
    }
    for (size_t k = 0; k < item.crowd_boxes.size(); ++k) {
      add(item.crowd_boxes[k], item.crowd_classes[k], true, nullptr, nullptr);
    }
  }
}

std::array<float, 2> to_original_point(float x, float y, const data::ImageGeometry& g) {
  // 8.4.190's scale_coords / scale_boxes: minus the padding, divided by each axis's own gain,
  // clipped to the image.
  auto unletterbox = [](float v, double pad, double gain, int limit) {
    return static_cast<float>(std::clamp((v - pad) / gain, 0.0, static_cast<double>(limit)));
  };
  return {unletterbox(x, g.pad_x, g.gain_x, g.original_width),
          unletterbox(y, g.pad_y, g.gain_y, g.original_height)};
}

geometry::RotatedBox to_original_rbox(const geometry::RotatedBox& box,
                                      const data::ImageGeometry& g) {
  return {(box.cx - g.pad_x) / g.gain_x, (box.cy - g.pad_y) / g.gain_y, box.w / g.gain_x,
          box.h / g.gain_y, box.angle};
}

std::array<float, 4> to_original_xyxy(const std::array<float, 4>& xyxy,
                                      const data::ImageGeometry& g) {
  // Each corner as a point: an inverted box (x2 < x1, YOLO26's raw side distances can be
  // negative) stays inverted.
  const auto [x1, y1] = to_original_point(xyxy[0], xyxy[1], g);
  const auto [x2, y2] = to_original_point(xyxy[2], xyxy[3], g);
  return {x1, y1, x2, y2};
}

ValidationOptions ValidationOptions::from_config(const core::TrainConfig& config) {
  ValidationOptions o;
  o.max_batches = config.run.val_batches;
  o.predict.conf = config.run.conf;
  // The reference's OBB validator keeps scores > 0.01 where the others keep > 0.001: an OBB run
  // with conf at its default takes 0.01 (any other value is the user's).
  const core::TrainConfig defaults;
  if (run_task(config) == core::Task::kObb && config.run.conf == defaults.run.conf) {
    o.predict.conf = kObbValidationConf;
  }
  o.predict.iou = config.run.iou;
  o.predict.max_det = config.run.max_det;
  // 8.4.190: `nms` null (default) or true validates YOLO26 on the one-to-many head with NMS.
  o.predict.use_one2many = config.run.nms != core::NmsMode::kOff;
  return o;
}

int64_t Validator::category_id(int cls) const {
  return category_ids_.at(cls);
}
int64_t Validator::image_id(int64_t dataset_index) const {
  return image_ids_.at(dataset_index);
}

ValidationResult Validator::run(model::DetectionModelImpl& model, loss::DetectionLoss* criterion,
                                const ValidationOptions& options) {
  ModeGuard mode(model);
  torch::NoGradGuard no_grad;
  const bool bf16 = config_.run.precision == core::Precision::kBF16;
  eval::ReferenceMetric metric(val_set_->nc(), static_cast<int>(options.predict.max_det));
  eval::ReferenceMetric pose_metric(val_set_->nc(), static_cast<int>(options.predict.max_det));
  eval::ReferenceMetric mask_metric(val_set_->nc(), static_cast<int>(options.predict.max_det));
  // Segmentation rows: [x1, y1, x2, y2, score, class] then nm mask coefficients.
  const bool segments = model.segments();
  const bool native_masks = segments && options.keep_detections;
  // Pose rows: [x1, y1, x2, y2, score, class] then K x dims keypoint values (model/postprocess.h).
  const model::KeypointShape kpt = model.keypoint_shape();
  const bool pose = kpt.count > 0;
  // OBB rows: [cx, cy, w, h, score, class, angle]; matched by ProbIoU (reference-tasks.md 3.5).
  const bool oriented = model.oriented();
  if (pose && kpt_sigmas_.size() != static_cast<size_t>(kpt.count)) {
    throw core::ConfigError("the pose model has " + std::to_string(kpt.count) +
                            " keypoints but the dataset's kpt_shape has " +
                            std::to_string(kpt_sigmas_.size()));
  }
  const int64_t row_width = 6 + model.head()->extra_channels();
  ValidationResult result;
  std::vector<eval::Detection> detections;
  std::set<int64_t> seen_images;
  at::Tensor loss_sum;  // sized by the criterion's first items
  int64_t loss_batches = 0;
  loader_->start_epoch(0, /*mosaic=*/false);
  int64_t batch_index = 0;
  while (auto batch = loader_->next()) {
    if (options.max_batches > 0 && batch_index >= options.max_batches) break;
    ++batch_index;
    auto t0 = Clock::now();
    auto images = data::images_to_device(batch->images, device_, torch::kFloat,
                                         model_memory_format(config_, device_));
    synchronize(device_);
    result.preprocess_ms += elapsed_ms(t0);

    t0 = Clock::now();
    model::DetectOutput raw;
    {
      core::AutocastGuard autocast(device_.type(), at::kBFloat16, bf16);
      raw = forward_in_chunks(model, images, device_.is_cuda() ? 0 : kCpuForwardChunk);
    }
    synchronize(device_);
    result.inference_ms += elapsed_ms(t0);

    t0 = Clock::now();
    if (criterion) {  // summed on the device: read once after the last batch
      const at::Tensor items =
          (*criterion)(raw,
                       loss::LossTargets{batch->labels, batch->keypoints, batch->rboxes,
                                         batch->masks, batch->overlap_masks},
                       images.size(0))
              .items.detach()
              .to(torch::kFloat);
      if (!loss_sum.defined()) loss_sum = torch::zeros_like(items);
      loss_sum += items;
      ++loss_batches;
    }
    const std::vector<at::Tensor> per_image = model.postprocess(raw, options.predict);
    const std::vector<LetterboxedTruth> truth = letterboxed_truth(
        batch->labels, static_cast<int64_t>(per_image.size()), static_cast<float>(images.size(3)),
        static_cast<float>(images.size(2)), pose ? batch->keypoints : at::Tensor(),
        oriented ? batch->rboxes : at::Tensor());
    // The whole batch's detections reach the host in one copy (one sync per batch, not per image).
    const at::Tensor all_rows =
        per_image.empty() ? torch::zeros({0, row_width})
                          : torch::cat(per_image).to(torch::kCPU, torch::kFloat).contiguous();
    const float* r = all_rows.data_ptr<float>();
    int64_t first_row = 0;  // the image's first label row in the batch
    // Segmentation: the batch's GT masks on the predictions' device, once per batch.
    const at::Tensor batch_masks =
        segments && batch->masks.defined() ? batch->masks.to(device_) : at::Tensor();
    for (size_t b = 0; b < per_image.size(); ++b) {
      const int64_t image_rows_gt = static_cast<int64_t>(truth[b].classes.size());
      first_row += b == 0 ? 0 : static_cast<int64_t>(truth[b - 1].classes.size());
      const int64_t n = per_image[b].size(0);
      const float* image_rows = r;
      r += row_width * n;
      const int64_t index = batch->dataset_indices[b];
      if (!seen_images.insert(index).second) continue;  // padding repeats (sharded val)
      const auto& g = batch->geometry[b];
      at::Tensor masks;           // segmentation: the detections' masks, uint8 (n, h, w)
      at::Tensor original_masks;  // ... at the original size (for the RLE of predictions.json)
      if (segments) {
        const auto& rows = per_image[b];
        masks = predicted_masks(raw.protos.front()[static_cast<int64_t>(b)],
                                rows.narrow(1, 6, row_width - 6), rows.narrow(1, 0, 4),
                                images.size(2), images.size(3), native_masks);
        if (native_masks) {
          original_masks = masks_to_original(masks, g).to(torch::kCPU).contiguous();
        }
      }
      // The reference metric matches in letterboxed input pixels (8.4.190); only the COCO results
      // (and the COCO protocol, which needs them) are scaled back to the original image.
      std::vector<std::array<float, 4>> boxes;
      std::vector<float> scores;
      std::vector<int> classes;
      std::vector<float> points;                  // pose: n x K x dims, input pixels
      std::vector<geometry::RotatedBox> rotated;  // OBB: input pixels
      for (int64_t k = 0; k < n; ++k) {
        const float* row = image_rows + row_width * k;
        boxes.push_back({row[0], row[1], row[2], row[3]});
        scores.push_back(row[4]);
        classes.push_back(static_cast<int>(row[5]));
        eval::Detection detection{image_id(index), category_id(classes.back()), {}, row[4], {}};
        detection.class_index = classes.back();
        detection.file_name = val_set_->items[index].image.filename().string();
        if (oriented) {
          rotated.push_back({row[0], row[1], row[2], row[3], row[6]});
          const geometry::RotatedBox original = to_original_rbox(rotated.back(), g);
          detection.rbox = {original.cx, original.cy, original.w, original.h, original.angle};
          for (const auto& c : geometry::corners(original)) {
            detection.poly.insert(detection.poly.end(), {c.x, c.y});
          }
          detection.bbox_xywh = geometry::extent_xywh(original);
        } else {
          const std::array<float, 4> box = to_original_xyxy(boxes.back(), g);
          detection.bbox_xywh = {box[0], box[1], box[2] - box[0], box[3] - box[1]};
        }
        if (original_masks.defined()) {
          detection.segmentation = eval::rle_encode(original_masks[k].data_ptr<uint8_t>(),
                                                    g.original_height, g.original_width);
        }
        if (pose) {
          points.insert(points.end(), row + 6, row + row_width);
          for (int64_t p = 0; p < kpt.count; ++p) {
            const float* point = row + 6 + p * kpt.dims;
            const auto xy = to_original_point(point[0], point[1], g);
            detection.keypoints.push_back(xy[0]);
            detection.keypoints.push_back(xy[1]);
            detection.keypoints.push_back(kpt.dims == 3 ? point[2] : 1.0);
          }
        }
        detections.push_back(std::move(detection));
      }
      if (oriented) {
        // ProbIoU (floor 0) of every GT with every prediction, [gt][pred], in input pixels.
        std::vector<float> overlaps;
        overlaps.reserve(truth[b].rboxes.size() * rotated.size());
        for (const auto& gt : truth[b].rboxes) {
          for (const auto& pred : rotated) {
            overlaps.push_back(static_cast<float>(geometry::probiou(gt, pred)));
          }
        }
        metric.add_image_overlaps(overlaps, scores, classes, truth[b].classes);
      } else {
        metric.add_image(boxes, scores, classes, truth[b].boxes, truth[b].classes);
      }
      if (segments) {
        // The reference's tp_m: mask IoU with the GT masks at the predictions' resolution.
        const auto gt = truth_masks(batch_masks, batch->overlap_masks, static_cast<int64_t>(b),
                                    first_row, image_rows_gt, masks.size(1), masks.size(2));
        mask_metric.add_image_overlaps(mask_overlaps(gt, masks), scores, classes, truth[b].classes);
      }
      if (pose) {
        // The reference's tp_p: OKS with the GT box area (input pixels) x 0.53, GT visibility only.
        std::vector<float> areas;
        for (const auto& gt : truth[b].boxes) {
          areas.push_back((gt[2] - gt[0]) * (gt[3] - gt[1]) * eval::kKeypointAreaFactor);
        }
        const auto oks = eval::reference_keypoint_oks(truth[b].keypoints, points, areas,
                                                      static_cast<size_t>(kpt.count),
                                                      static_cast<size_t>(kpt.dims), kpt_sigmas_);
        pose_metric.add_image_overlaps(oks, scores, classes, truth[b].classes);
      }
    }
    result.postprocess_ms += elapsed_ms(t0);
  }
  result.images = static_cast<int64_t>(seen_images.size());
  if (result.images > 0) {
    result.preprocess_ms /= result.images;
    result.inference_ms /= result.images;
    result.postprocess_ms /= result.images;
  }
  result.metric = metric.compute();
  if (pose) result.pose_metric = pose_metric.compute();
  if (segments) result.mask_metric = mask_metric.compute();
  if (loss_batches > 0) {
    const at::Tensor mean =
        (loss_sum / static_cast<double>(loss_batches)).to(torch::kCPU).to(torch::kDouble);
    for (int64_t k = 0; k < mean.size(0); ++k) result.loss_items.push_back(mean[k].item<double>());
  }
  if (options.coco && !oriented) {  // OBB: the reference metric only (trainer eval --iou-type obb)
    data::CocoFile gt = ground_truth_;
    if (options.max_batches > 0) {  // score only the images that were run
      std::set<int64_t> ids;
      for (int64_t index : seen_images) ids.insert(image_id(index));
      auto& images = gt.images;
      images.erase(std::remove_if(images.begin(), images.end(),
                                  [&](const data::CocoImage& im) { return !ids.count(im.id); }),
                   images.end());
      auto& annotations = gt.annotations;
      annotations.erase(
          std::remove_if(annotations.begin(), annotations.end(),
                         [&](const data::CocoAnnotation& a) { return !ids.count(a.image_id); }),
          annotations.end());
    }
    result.coco = eval::evaluate_coco(gt, detections);
    if (native_masks) {  // the masks are RLE only when kept for predictions.json
      eval::CocoEvalOptions segm;
      segm.iou_type = eval::IouType::kSegm;
      try {
        result.coco_masks = eval::evaluate_coco(gt, detections, segm);
      } catch (const core::InputError& e) {  // e.g. ground truth without segmentation
        spdlog::warn("COCO mask evaluation skipped: {}", e.what());
      }
    }
    if (pose) {
      eval::CocoEvalOptions keypoints;
      keypoints.iou_type = eval::IouType::kKeypoints;
      keypoints.kpt_oks_sigmas = kpt_sigmas_;
      try {
        result.coco_keypoints = eval::evaluate_coco(gt, detections, keypoints);
      } catch (const core::InputError& e) {  // e.g. an instances json without keypoints
        spdlog::warn("COCO keypoint evaluation skipped: {}", e.what());
      }
    }
  }
  if (options.keep_detections) result.detections = std::move(detections);
  return result;
}

std::string format_validation_table(const ValidationResult& r,
                                    const std::vector<std::string>& names, bool per_class) {
  std::string out = fmt::format("{:>22}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}{:>14}\n", "Class",
                                "Images", "Instances", "P", "R", "mAP50", "mAP50-95", "COCO AP");
  const auto& m = r.metric;
  const double coco_ap = r.coco ? r.coco->stats[0] : -1.0;
  out += fmt::format("{:>22}{:>11}{:>11}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>14.3f}\n", "all",
                     r.images, m.num_gt, m.precision, m.recall, m.map50, m.map50_95, coco_ap);
  if (per_class) {
    for (const auto& c : m.per_class) {
      double class_coco = -1;
      if (r.coco) {
        for (const auto& pc : r.coco->per_category) {
          if (pc.name == names.at(c.class_id)) class_coco = pc.ap;
        }
      }
      out += fmt::format("{:>22}{:>11}{:>11}{:>11.3f}{:>11.3f}{:>11.3f}{:>11.3f}{:>14.3f}\n",
                         names.at(c.class_id), "", c.num_gt, c.precision, c.recall, c.ap50,
                         c.ap50_95, class_coco);
    }
  }
  out +=
      "(P, R, mAP50, mAP50-95: the reference trainer's metric; COCO AP: the COCO protocol, "
      "identical to pycocotools)\n";
  return out;
}

void write_predictions_json(const std::vector<eval::Detection>& detections,
                            const std::filesystem::path& file) {
  core::write_file_atomically(file, eval::format_coco_results(detections));
}

}  // namespace trainer::engine
