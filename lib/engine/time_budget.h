// The reference's `time` key: train for a number of hours instead of a number of epochs.
//
// Why: on a shared GPU box people book hours, not epochs. As in the reference, the first epoch
// runs with the configured `epochs`; after every epoch the run re-estimates how many epochs fit
// in the budget (ceil(hours * 3600 / mean epoch seconds)) and the learning-rate schedule and
// close_mosaic follow that number; training stops at the first optimizer step past the budget
// (then validates and saves as after a last epoch), or when the estimated epochs are done. The
// budget counts this process's time: a resumed run gets the full budget again.
#pragma once

#include <cstdint>

namespace trainer::engine {

class TimeBudget {
 public:
  explicit TimeBudget(double hours) : seconds_(hours * 3600.0) {}

  bool active() const { return seconds_ > 0.0; }
  // Whether `elapsed` seconds of training have used the budget up.
  bool exhausted(double elapsed) const { return active() && elapsed > seconds_; }
  // The epochs the budget holds at the mean epoch time so far (`epochs_done` >= 1 in this
  // process): ceil(budget / (elapsed / epochs_done)), at least 1.
  int64_t epochs_for(double elapsed, int64_t epochs_done) const;

 private:
  double seconds_;
};

}  // namespace trainer::engine
