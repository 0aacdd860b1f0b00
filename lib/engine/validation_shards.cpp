// See validation_shards.h.
#include "engine/validation_shards.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "core/byte_stream.h"
#include "distributed/group.h"
#include "eval/detection_bytes.h"

namespace trainer::engine {

void ValidationShards::add_batch(int64_t index, TaskScorer& scorer,
                                 std::vector<eval::Detection>& detections, size_t first_detection,
                                 std::vector<int64_t> images, at::Tensor loss_items) {
  core::ByteWriter out;
  scorer.take_state(out);
  const std::vector<eval::Detection> added(
      std::make_move_iterator(detections.begin() + static_cast<std::ptrdiff_t>(first_detection)),
      std::make_move_iterator(detections.end()));
  detections.resize(first_detection);
  eval::write_detections(out, added);
  batches_.push_back({index, out.take(), std::move(images), std::move(loss_items)});
}

void ValidationShards::set_times(double preprocess_ms, double inference_ms, double postprocess_ms) {
  times_[0] = preprocess_ms;
  times_[1] = inference_ms;
  times_[2] = postprocess_ms;
}

MergedShards ValidationShards::merge(distributed::Group& group, TaskScorer& scorer,
                                     std::vector<eval::Detection>& detections,
                                     std::set<int64_t>& images) {
  core::ByteWriter out;
  for (double t : times_) out.pod(t);
  out.pod<uint64_t>(batches_.size());
  for (const Batch& b : batches_) {
    out.pod(b.index);
    out.str(b.state);
    out.vec(b.images);
    std::vector<float> items;
    if (b.loss_items.defined()) {
      const at::Tensor host = b.loss_items.to(torch::kCPU, torch::kFloat).contiguous();
      items.assign(host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
    }
    out.vec(items);
  }
  batches_.clear();
  const std::vector<std::string> ranks = group.all_gather_text(out.bytes());
  MergedShards merged;
  if (group.rank() != 0) return merged;

  struct Received {
    std::string state;
    std::vector<int64_t> images;
    std::vector<float> items;
  };
  std::map<int64_t, Received> by_index;  // plan order
  for (const std::string& bytes : ranks) {
    core::ByteReader in(bytes);
    merged.preprocess_ms += in.pod<double>();
    merged.inference_ms += in.pod<double>();
    merged.postprocess_ms += in.pod<double>();
    const uint64_t count = in.count(8, "batches");
    for (uint64_t k = 0; k < count; ++k) {
      const auto index = in.pod<int64_t>();
      Received r{in.str(), in.vec<int64_t>(), in.vec<float>()};
      if (!by_index.emplace(index, std::move(r)).second) {
        throw std::runtime_error("sharded validation: two ranks scored batch " +
                                 std::to_string(index));
      }
    }
  }
  for (auto& [index, r] : by_index) {
    core::ByteReader in(r.state);
    scorer.append_state(in);
    eval::read_detections(in, detections);
    images.insert(r.images.begin(), r.images.end());
    if (!r.items.empty()) {
      merged.loss_items.push_back(
          torch::from_blob(r.items.data(), {static_cast<int64_t>(r.items.size())}, torch::kFloat)
              .clone());
    }
  }
  return merged;
}

}  // namespace trainer::engine
