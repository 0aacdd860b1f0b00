// COCO evaluation driver: groups ground truth and detections by (category, image), matches and
// accumulates each category on a worker thread, then summarizes; see coco_eval.h.
#include "eval/coco_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>

#include "core/error.h"
#include "eval/coco_masks.h"
#include "eval/coco_match.h"
#include "eval/numeric.h"
#include "eval/parallel.h"

namespace trainer::eval {
namespace {

// Indices of `count` items sorted (stably) by (category index, image index): within one
// (image, category) they stay in input order, which is the order pycocotools sees them in.
std::vector<uint32_t> group_by_category_image(size_t count, const std::vector<int>& cat,
                                              const std::vector<int>& img) {
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return cat[x] != cat[y] ? cat[x] < cat[y] : img[x] < img[y];
  });
  return order;
}

struct Grouped {
  std::vector<int> cat, img;
  std::vector<uint32_t> order;
  std::vector<size_t> category_begin;  // order[category_begin[k] .. category_begin[k + 1])
};

template <typename GetIds>
Grouped group(size_t count, int num_categories, GetIds ids) {
  Grouped g;
  g.cat.resize(count);
  g.img.resize(count);
  for (size_t i = 0; i < count; ++i) ids(i, &g.cat[i], &g.img[i]);
  g.order = group_by_category_image(count, g.cat, g.img);
  g.category_begin.assign(static_cast<size_t>(num_categories) + 1, 0);
  for (int c : g.cat) ++g.category_begin[static_cast<size_t>(c) + 1];
  std::partial_sum(g.category_begin.begin(), g.category_begin.end(), g.category_begin.begin());
  return g;
}

// Keypoint evaluation needs K points on both sides and the ground truth's labelled-point count.
void check_keypoints(const std::vector<const data::CocoAnnotation*>& annotations,
                     const std::vector<Detection>& detections, size_t k,
                     const data::CocoFile& ground_truth) {
  const auto fail = [&](const std::string& what) {
    throw core::InputError(fmt::format("{}: {}", ground_truth.source.string(), what));
  };
  for (const auto* a : annotations) {
    if (a->num_keypoints < 0) {
      fail(fmt::format("annotation id {} has no \"num_keypoints\" (not a keypoints file?)", a->id));
    }
    if (a->keypoints.size() != 3 * k) {
      fail(fmt::format("annotation id {} has {} keypoint values, expected {}", a->id,
                       a->keypoints.size(), 3 * k));
    }
  }
  for (size_t i = 0; i < detections.size(); ++i) {
    if (detections[i].keypoints.size() != 3 * k) {
      throw core::InputError(
          fmt::format("detection #{} (image_id {}) has {} keypoint values, "
                      "expected {}",
                      i, detections[i].image_id, detections[i].keypoints.size(), 3 * k));
    }
  }
}

// OBB evaluation needs a rotated box ("rbox" or "poly") on every annotation and detection.
void check_rotated_boxes(const std::vector<const data::CocoAnnotation*>& annotations,
                         const std::vector<Detection>& detections,
                         const data::CocoFile& ground_truth) {
  for (const auto* a : annotations) {
    if (a->rbox.size() != 5) {
      throw core::InputError(fmt::format(
          "{}: annotation id {} has no \"rbox\" [cx, cy, w, h, angle] or \"poly\" (4 corners); "
          "--iou-type obb needs rotated boxes",
          ground_truth.source.string(), a->id));
    }
  }
  for (size_t i = 0; i < detections.size(); ++i) {
    if (detections[i].rbox.size() != 5) {
      throw core::InputError(fmt::format(
          "detection #{} (image_id {}) has no \"rbox\" or \"poly\"; --iou-type obb needs rotated "
          "boxes",
          i, detections[i].image_id));
    }
  }
}

// Segmentation evaluation needs a "segmentation" on every annotation (pycocotools' annToRLE fails
// on one without).
void check_segmentations(const std::vector<const data::CocoAnnotation*>& annotations,
                         const data::CocoFile& ground_truth) {
  for (const auto* a : annotations) {
    if (a->segmentation.empty()) {
      throw core::InputError(
          fmt::format("{}: annotation id {} has no \"segmentation\" (polygons or RLE); "
                      "--iou-type segm needs masks",
                      ground_truth.source.string(), a->id));
    }
  }
}

// pycocotools' annToRLE for one ground-truth annotation, errors named by file and annotation.
Rle annotation_mask(const data::CocoAnnotation& a, const std::pair<int, int>& image_size,
                    const data::CocoFile& ground_truth) {
  try {
    return coco_segmentation_rle(a.segmentation, image_size.first, image_size.second);
  } catch (const std::invalid_argument& e) {
    throw core::InputError(
        fmt::format("{}: annotation id {}: {}", ground_truth.source.string(), a.id, e.what()));
  }
}

CocoAccumulation run_evaluation(const data::CocoFile& ground_truth,
                                const std::vector<Detection>& detections, const CocoParams& params,
                                const CocoEvalOptions& options, std::vector<int64_t>* num_gt) {
  check_detections(detections, ground_truth, "detections");
  // pycocotools: imgIds = sorted(all images), catIds = sorted(all categories).
  std::vector<int64_t> image_ids, category_ids;
  for (const auto& image : ground_truth.images) image_ids.push_back(image.id);
  for (const auto& category : ground_truth.categories) category_ids.push_back(category.id);
  std::sort(image_ids.begin(), image_ids.end());
  std::sort(category_ids.begin(), category_ids.end());
  std::unordered_map<int64_t, int> image_index, category_index;
  image_index.reserve(image_ids.size() * 2);
  for (size_t i = 0; i < image_ids.size(); ++i) image_index[image_ids[i]] = static_cast<int>(i);
  std::vector<std::pair<int, int>> image_sizes(image_ids.size());  // height, width by index
  for (const auto& image : ground_truth.images) {
    image_sizes[static_cast<size_t>(image_index.at(image.id))] = {image.height, image.width};
  }
  for (size_t k = 0; k < category_ids.size(); ++k)
    category_index[category_ids[k]] = static_cast<int>(k);
  const int K = static_cast<int>(category_ids.size());

  // Ground truth of categories that are not declared cannot be evaluated (pycocotools drops it).
  std::vector<const data::CocoAnnotation*> annotations;
  for (const auto& ann : ground_truth.annotations) {
    if (category_index.count(ann.category_id) && image_index.count(ann.image_id)) {
      annotations.push_back(&ann);
    }
  }
  const Grouped gts = group(annotations.size(), K, [&](size_t i, int* c, int* im) {
    *c = category_index.at(annotations[i]->category_id);
    *im = image_index.at(annotations[i]->image_id);
  });
  const Grouped dts = group(detections.size(), K, [&](size_t i, int* c, int* im) {
    *c = category_index.at(detections[i].category_id);
    *im = image_index.at(detections[i].image_id);
  });

  const bool keypoints = params.iou_type == IouType::kKeypoints;
  if (keypoints)
    check_keypoints(annotations, detections, params.kpt_oks_sigmas.size(), ground_truth);
  const bool rotated = params.iou_type == IouType::kObb;
  if (rotated) check_rotated_boxes(annotations, detections, ground_truth);
  const bool segm = params.iou_type == IouType::kSegm;
  if (segm) check_segmentations(annotations, ground_truth);
  CocoAccumulation acc(params, K);
  num_gt->assign(static_cast<size_t>(K), 0);
  const size_t max_det = static_cast<size_t>(params.largest_max_det());
  parallel_for(static_cast<size_t>(K), options.threads, [&](size_t k) {
    CategoryMatches matches(params.area_ranges.size());
    std::vector<GtBox> gt;
    std::vector<DtBox> dt;
    std::vector<MatchResult> result;
    std::vector<double> scratch;
    std::vector<Rle> gt_masks, box_masks;  // segm: this image's ground truth, box-only results
    size_t gi = gts.category_begin[k], gend = gts.category_begin[k + 1];
    size_t di = dts.category_begin[k], dend = dts.category_begin[k + 1];
    while (gi < gend || di < dend) {
      // The next image (ascending) that has ground truth or detections of this category.
      int image = std::numeric_limits<int>::max();
      if (gi < gend) image = gts.img[gts.order[gi]];
      if (di < dend) image = std::min(image, dts.img[dts.order[di]]);
      gt.clear();
      const size_t g_begin = gi;
      for (; gi < gend && gts.img[gts.order[gi]] == image; ++gi) {
        const data::CocoAnnotation& a = *annotations[gts.order[gi]];
        // Keypoints: pycocotools also ignores ground truth without a labelled point.
        gt.push_back({a.bbox, a.area, a.iscrowd, a.id, keypoints && a.num_keypoints == 0,
                      keypoints ? &a.keypoints : nullptr, rotated ? &a.rbox : nullptr, nullptr});
      }
      dt.clear();
      const size_t d_begin = di;
      for (; di < dend && dts.img[dts.order[di]] == image; ++di) {
        const Detection& d = detections[dts.order[di]];
        dt.push_back({d.bbox_xywh, d.score, keypoints ? &d.keypoints : nullptr,
                      rotated ? &d.rbox : nullptr, nullptr, -1});
      }
      if (segm) {
        const auto& size = image_sizes[static_cast<size_t>(image)];
        gt_masks.clear();
        for (size_t i = g_begin; i < gi; ++i) {
          gt_masks.push_back(annotation_mask(*annotations[gts.order[i]], size, ground_truth));
        }
        for (size_t i = 0; i < gt.size(); ++i) gt[i].mask = &gt_masks[i];
        // A result without a mask is its box's polygon (loadRes gives a box result one), sized
        // by its box.
        box_masks.clear();
        for (size_t i = 0; i < dt.size(); ++i) {
          const Detection& d = detections[dts.order[d_begin + i]];
          if (!d.segmentation)
            box_masks.push_back(rle_from_bbox(d.bbox_xywh, size.first, size.second));
        }
        for (size_t i = 0, b = 0; i < dt.size(); ++i) {
          const Detection& d = detections[dts.order[d_begin + i]];
          dt[i].mask = d.segmentation ? &*d.segmentation : &box_masks[b++];
          if (d.segmentation && d.area_from_mask) {
            dt[i].mask_area = static_cast<double>(rle_area(*d.segmentation));
          }
        }
      }
      // Highest score first (stable, as np.argsort(kind='mergesort')), at most maxDets[-1].
      std::stable_sort(dt.begin(), dt.end(),
                       [](const DtBox& x, const DtBox& y) { return x.score > y.score; });
      if (dt.size() > max_det) dt.resize(max_det);
      match_image_category(dt, gt, params, &result, &scratch);
      matches.add(dt, result);
    }
    (*num_gt)[k] = matches.num_gt_counted[0];
    accumulate_category(matches, static_cast<int>(k), params, &acc);
  });
  return acc;
}

// One of pycocotools' _summarize calls.
double summarize_one(const CocoAccumulation& acc, const CocoParams& params, bool ap, double iou,
                     bool all_iou, const char* area, int max_det) {
  std::vector<int> ts;
  for (int t = 0; t < acc.T; ++t) {
    if (all_iou || params.iou_thresholds[static_cast<size_t>(t)] == iou) ts.push_back(t);
  }
  int a = -1, m = -1;
  for (int i = 0; i < acc.A; ++i) {
    if (std::string(params.area_ranges[static_cast<size_t>(i)].label) == area) a = i;
  }
  for (int i = 0; i < acc.M; ++i) {
    if (params.max_dets[static_cast<size_t>(i)] == max_det) m = i;
  }
  std::vector<double> values;
  if (a >= 0 && m >= 0) {
    for (int t : ts) {
      if (ap) {
        for (int r = 0; r < acc.R; ++r) {
          for (int k = 0; k < acc.K; ++k) {
            const double v = acc.precision[acc.precision_index(t, r, k, a, m)];
            if (v > -1) values.push_back(v);
          }
        }
      } else {
        for (int k = 0; k < acc.K; ++k) {
          const double v = acc.recall[acc.recall_index(t, k, a, m)];
          if (v > -1) values.push_back(v);
        }
      }
    }
  }
  return values.empty() ? -1.0 : numpy_mean(values);
}

struct StatSpec {
  bool ap;
  double iou;  // < 0: all thresholds
  const char* area;
  int max_det_index;
};

constexpr std::array<StatSpec, 12> kStatSpecs = {{{true, -1, "all", 2},
                                                  {true, 0.5, "all", 2},
                                                  {true, 0.75, "all", 2},
                                                  {true, -1, "small", 2},
                                                  {true, -1, "medium", 2},
                                                  {true, -1, "large", 2},
                                                  {false, -1, "all", 0},
                                                  {false, -1, "all", 1},
                                                  {false, -1, "all", 2},
                                                  {false, -1, "small", 2},
                                                  {false, -1, "medium", 2},
                                                  {false, -1, "large", 2}}};

constexpr std::array<StatSpec, 10> kKeypointStatSpecs = {{{true, -1, "all", 0},
                                                          {true, 0.5, "all", 0},
                                                          {true, 0.75, "all", 0},
                                                          {true, -1, "medium", 0},
                                                          {true, -1, "large", 0},
                                                          {false, -1, "all", 0},
                                                          {false, 0.5, "all", 0},
                                                          {false, 0.75, "all", 0},
                                                          {false, -1, "medium", 0},
                                                          {false, -1, "large", 0}}};

std::vector<StatSpec> stat_specs(IouType type) {
  if (type == IouType::kKeypoints) return {kKeypointStatSpecs.begin(), kKeypointStatSpecs.end()};
  return {kStatSpecs.begin(), kStatSpecs.end()};
}

CocoParams params_for(IouType type) {
  if (type == IouType::kKeypoints) return coco_keypoint_params();
  CocoParams p;  // boxes, rotated boxes and masks: the box protocol's settings
  p.iou_type = type;
  return p;
}

}  // namespace

CocoAccumulation accumulate_coco(const data::CocoFile& ground_truth,
                                 const std::vector<Detection>& detections, const CocoParams& params,
                                 const CocoEvalOptions& options) {
  std::vector<int64_t> num_gt;
  return run_evaluation(ground_truth, detections, params, options, &num_gt);
}

std::array<double, 12> summarize_coco(const CocoAccumulation& acc, const CocoParams& params) {
  std::array<double, 12> stats{};
  stats.fill(-1.0);
  const std::vector<StatSpec> specs = stat_specs(params.iou_type);
  for (size_t i = 0; i < specs.size(); ++i) {
    const StatSpec& s = specs[i];
    stats[i] = summarize_one(acc, params, s.ap, s.iou, s.iou < 0, s.area,
                             params.max_dets[static_cast<size_t>(s.max_det_index)]);
  }
  return stats;
}

CocoStats evaluate_coco(const data::CocoFile& ground_truth,
                        const std::vector<Detection>& detections, const CocoEvalOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CocoParams params = params_for(options.iou_type);
  if (options.iou_type == IouType::kKeypoints && !options.kpt_oks_sigmas.empty()) {
    params.kpt_oks_sigmas = options.kpt_oks_sigmas;
  }
  std::vector<int64_t> num_gt;
  const CocoAccumulation acc = run_evaluation(ground_truth, detections, params, options, &num_gt);
  CocoStats out;
  out.iou_type = options.iou_type;
  out.stats = summarize_coco(acc, params);
  std::vector<const data::CocoCategory*> categories;
  for (const auto& c : ground_truth.categories) categories.push_back(&c);
  std::sort(categories.begin(), categories.end(),
            [](const auto* x, const auto* y) { return x->id < y->id; });
  for (int k = 0; k < acc.K; ++k) {
    CocoCategoryAp c;
    c.category_id = categories[static_cast<size_t>(k)]->id;
    c.name = categories[static_cast<size_t>(k)]->name;
    c.num_gt = num_gt[static_cast<size_t>(k)];
    std::vector<double> all, at50;
    for (int t = 0; t < acc.T; ++t) {
      for (int r = 0; r < acc.R; ++r) {
        const double v = acc.precision[acc.precision_index(t, r, k, 0, acc.M - 1)];
        if (v <= -1) continue;
        all.push_back(v);
        if (t == 0) at50.push_back(v);
      }
    }
    if (!all.empty()) c.ap = numpy_mean(all);
    if (!at50.empty()) c.ap50 = numpy_mean(at50);
    out.per_category.push_back(std::move(c));
  }
  out.num_images = ground_truth.images.size();
  out.num_categories = ground_truth.categories.size();
  out.num_detections = detections.size();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

const char* iou_type_name(IouType type) {
  switch (type) {
    case IouType::kKeypoints:
      return "keypoints";
    case IouType::kObb:
      return "obb";
    case IouType::kSegm:
      return "segm";
    case IouType::kBox:
      break;
  }
  return "bbox";
}

const std::vector<const char*>& coco_stat_keys(IouType type) {
  static const std::vector<const char*> box = {"AP",  "AP50", "AP75",  "APs", "APm", "APl",
                                               "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"};
  static const std::vector<const char*> keypoints = {"AP", "AP50", "AP75", "APm", "APl",
                                                     "AR", "AR50", "AR75", "ARm", "ARl"};
  return type == IouType::kKeypoints ? keypoints : box;
}

std::string format_coco_summary(const CocoStats& stats) {
  const CocoParams params = params_for(stats.iou_type);
  const std::vector<StatSpec> specs = stat_specs(stats.iou_type);
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) {
    const StatSpec& s = specs[i];
    const std::string iou = s.iou < 0
                                ? fmt::format("{:0.2f}:{:0.2f}", params.iou_thresholds.front(),
                                              params.iou_thresholds.back())
                                : fmt::format("{:0.2f}", s.iou);
    out +=
        fmt::format(" {:<18} {} @[ IoU={:<9} | area={:>6} | maxDets={:>3} ] = {:0.3f}\n",
                    s.ap ? "Average Precision" : "Average Recall", s.ap ? "(AP)" : "(AR)", iou,
                    s.area, params.max_dets[static_cast<size_t>(s.max_det_index)], stats.stats[i]);
  }
  return out;
}

std::string coco_stats_json(const CocoStats& stats) {
  nlohmann::ordered_json j;
  const auto& keys = coco_stat_keys(stats.iou_type);
  for (size_t i = 0; i < keys.size(); ++i) j[keys[i]] = stats.stats[i];
  j["stats"] = std::vector<double>(stats.stats.begin(), stats.stats.begin() + keys.size());
  j["iou_type"] = iou_type_name(stats.iou_type);
  nlohmann::ordered_json per = nlohmann::ordered_json::array();
  for (const auto& c : stats.per_category) {
    per.push_back({{"category_id", c.category_id},
                   {"name", c.name},
                   {"num_gt", c.num_gt},
                   {"ap", c.ap},
                   {"ap50", c.ap50}});
  }
  j["per_category"] = per;
  j["num_images"] = stats.num_images;
  j["num_categories"] = stats.num_categories;
  j["num_detections"] = stats.num_detections;
  j["seconds"] = stats.seconds;
  return j.dump(2) + "\n";
}

}  // namespace trainer::eval
