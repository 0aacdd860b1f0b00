// See task_scorer.h.
#include "engine/task/task_scorer.h"

namespace trainer::engine {

void TaskScorer::take_state(core::ByteWriter& out) {
  for (eval::ReferenceMetric* metric : metrics()) metric->take_images(out);
}

void TaskScorer::append_state(core::ByteReader& in) {
  for (eval::ReferenceMetric* metric : metrics()) metric->append_taken(in);
}

}  // namespace trainer::engine
