// The loss's view of a batch: the same tensors, no copy, and the selecting path's cap.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "engine/batch_targets.h"

using namespace trainer;

TEST_CASE("batch targets: loss_targets_of hands the batch's tensors to the loss without a copy") {
  data::Batch batch;
  batch.labels = torch::rand({3, 6});
  batch.keypoints = torch::rand({3, 17, 3});
  batch.rboxes = torch::rand({3, 5});
  batch.masks = torch::zeros({2, 8, 8}, torch::kInt);
  batch.overlap_masks = false;
  const loss::LossTargets t = engine::loss_targets_of(batch);
  CHECK(t.labels.data_ptr() == batch.labels.data_ptr());
  CHECK(t.keypoints.data_ptr() == batch.keypoints.data_ptr());
  CHECK(t.rboxes.data_ptr() == batch.rboxes.data_ptr());
  CHECK(t.masks.data_ptr() == batch.masks.data_ptr());
  CHECK_FALSE(t.overlap_masks);
  CHECK(t.static_instances == 0);  // the selecting path; the static step sets its own cap
  batch.overlap_masks = true;
  CHECK(engine::loss_targets_of(batch).overlap_masks);
}
