// See task_scorer.h.
// Tested by tests/engine/test_validation_shards.cpp: take_state/append_state: ranks' metric state
//   merged on rank 0 equals one process bit for bit.
#include "engine/task/task_scorer.h"

namespace trainer::engine {

void TaskScorer::take_state(core::ByteWriter& out) {
  for (eval::ReferenceMetric* metric : metrics()) metric->take_images(out);
}

void TaskScorer::append_state(core::ByteReader& in) {
  for (eval::ReferenceMetric* metric : metrics()) metric->append_taken(in);
}

}  // namespace trainer::engine
