// A validation sharded over the ranks of a data-parallel group: each rank scores whole batches of
// the one-process plan (batch k on rank k mod W, data::LoaderOptions::shard_batches) and keeps
// what each batch added (the scorer's statistics, the detections, the images scored, the loss
// items); rank 0 gathers every rank's batches and adds them back in the plan's order.
//
// Why the plan's order: the reference metric sorts predictions by confidence with ties kept in
// the order they were added, and predictions.json and the val loss (a float sum) depend on order
// too; merged batch by batch in the one-process order, rank 0 ends with exactly the statistics,
// detections and sums one process would have, so the metrics are equal bit for bit.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/task/task_scorer.h"

namespace trainer::distributed {
class Group;
}

namespace trainer::engine {

// What the ranks' batches add up to on rank 0 (empty on the others).
struct MergedShards {
  std::vector<at::Tensor> loss_items;  // per batch, in plan order (CPU float; none without loss)
  double preprocess_ms = 0, inference_ms = 0, postprocess_ms = 0;  // sums over every rank
};

class ValidationShards {
 public:
  // After batch `index` (its plan index): takes what `scorer` added during it and the detections
  // from `first_detection` on (removed from `detections`), the dataset indices it scored, and its
  // loss items (on the device; undefined without a criterion).
  void add_batch(int64_t index, TaskScorer& scorer, std::vector<eval::Detection>& detections,
                 size_t first_detection, std::vector<int64_t> images, at::Tensor loss_items);
  // This rank's time sums (milliseconds), sent with its batches.
  void set_times(double preprocess_ms, double inference_ms, double postprocess_ms);

  // Every rank calls this once. On rank 0: every rank's batches added to `scorer`, `detections`
  // and `images` in plan order, with the loss items and time sums returned; on the others nothing
  // is added. Throws std::runtime_error when two ranks scored the same batch or the bytes are
  // corrupt.
  MergedShards merge(distributed::Group& group, TaskScorer& scorer,
                     std::vector<eval::Detection>& detections, std::set<int64_t>& images);

 private:
  struct Batch {
    int64_t index = 0;
    std::string state;  // the scorer's statistics, then the detections
    std::vector<int64_t> images;
    at::Tensor loss_items;
  };
  std::vector<Batch> batches_;
  double times_[3] = {0, 0, 0};
};

}  // namespace trainer::engine
