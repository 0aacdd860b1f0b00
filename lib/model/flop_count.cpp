// Thread-local FLOP counter (see flop_count.h).
// Tested by tests/model/test_model_summary.cpp: GFLOPs (conv MACs, BN elements, attention products)
//   equal the reference's, scale with image area.
#include "model/flop_count.h"

namespace trainer::model {
namespace {
thread_local FlopCount* g_active = nullptr;
}  // namespace

FlopCount* active_flop_count() {
  return g_active;
}

FlopCountScope::FlopCountScope(FlopCount* count) : previous_(g_active) {
  g_active = count;
}

FlopCountScope::~FlopCountScope() {
  g_active = previous_;
}

}  // namespace trainer::model
