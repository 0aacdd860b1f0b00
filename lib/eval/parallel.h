// A minimal parallel loop over indices for the evaluator's independent work items (categories).
//
// Why: the COCO evaluator is plain C++ (no LibTorch), and one dynamic-scheduling loop over a
// handful of threads is all it needs; the first exception thrown by any item is rethrown.
#pragma once

#include <cstddef>
#include <functional>

namespace trainer::eval {

// Threads to use for `requested` (0 = the hardware concurrency, at least 1).
int resolve_threads(int requested);

// Calls fn(i) for every i in [0, n) on up to `threads` threads (items handed out in index order).
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace trainer::eval
