// See cuda_graph_step.h. The capture itself is CUDA-only (TRAINER_WITH_CUDA); everything else
// (staging, warm-up, the eager bodies, invalidation) is shared with the CPU, where the tests run.
#include "engine/static_step/cuda_graph_step.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

#ifdef TRAINER_WITH_CUDA
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace trainer::engine {

namespace {

#ifdef TRAINER_WITH_CUDA
using SideStream = c10::cuda::CUDAStream;

// Runs the scope's work on `stream` (CUDA) after the caller's stream, and makes the caller's
// stream wait for it at the end, so what follows (validation, checkpoints, reads of the running
// sums) sees the step's results.
class SideStreamScope {
 public:
  explicit SideStreamScope(const std::optional<c10::cuda::CUDAStream>& stream) {
    if (!stream) return;
    caller_ = c10::cuda::getCurrentCUDAStream(stream->device_index());
    at::cuda::CUDAEvent ready;
    ready.record(*caller_);
    ready.block(*stream);
    guard_.emplace(*stream);
    side_ = stream;
  }
  ~SideStreamScope() {
    if (!side_) return;
    guard_.reset();
    at::cuda::CUDAEvent done;
    done.record(*side_);
    done.block(*caller_);
  }
  SideStreamScope(const SideStreamScope&) = delete;
  SideStreamScope& operator=(const SideStreamScope&) = delete;

 private:
  std::optional<c10::cuda::CUDAStream> caller_;
  std::optional<c10::cuda::CUDAStream> side_;
  std::optional<c10::cuda::CUDAStreamGuard> guard_;
};

// A graph that says whether its capture ended (capture_end registered the memory pool's end, so
// its destructor releases the pool): a failed capture's cleanup must not release it twice.
struct CapturedGraph : at::cuda::CUDAGraph {
  bool capture_ended() const { return capture_ended_; }
};

// Ends a capture that an exception interrupted, whatever state it is in, so the stream and both
// caching allocators are usable again and the half-recorded graph's memory goes back: if
// capture_end throws (cudaStreamEndCapture reports the invalidated capture) before it ends the
// pool's allocation, the allocators would keep routing to it and its blocks would never be freed.
void abandon_capture(std::unique_ptr<CapturedGraph>& graph, const c10::cuda::CUDAStream& stream,
                     const at::cuda::MempoolId_t& pool) {
  try {
    graph->capture_end();
  } catch (const std::exception&) {  // an invalidated capture: capture_end reports it
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream.stream(), &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    cudaGraph_t raw = nullptr;
    if (cudaStreamEndCapture(stream.stream(), &raw) == cudaSuccess && raw != nullptr) {
      cudaGraphDestroy(raw);
    }
  }
  (void)cudaGetLastError();  // clear the sticky capture error
  const bool ended = graph->capture_ended();
  graph.reset();  // releases the pool itself when the capture had ended
  if (!ended) {
    namespace allocator = c10::cuda::CUDACachingAllocator;
    const c10::DeviceIndex device = stream.device_index();
    // Each step may find nothing to do (the capture failed before the pool was set up).
    const auto best_effort = [](const auto& release) {
      try {
        release();
      } catch (const std::exception&) {
      }
    };
    best_effort([&] { allocator::endAllocateToPool(device, pool); });
    best_effort([&] { at::getHostAllocator(at::kCUDA)->end_allocate_to_pool(pool); });
    best_effort([&] { allocator::releasePool(device, pool); });
    best_effort([&] { at::getHostAllocator(at::kCUDA)->release_pool(pool); });
  }
  c10::cuda::CUDACachingAllocator::emptyCache();
}

// Captures `body` into a new graph on the current (side) stream and replays it once: the capture
// records the kernels without running them. Returns the graph, or nullptr (logged) on failure.
std::unique_ptr<CapturedGraph> capture_and_run(const std::function<void()>& body,
                                               const char* what) {
  auto graph = std::make_unique<CapturedGraph>();
  const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream();
  const at::cuda::MempoolId_t pool = at::cuda::graph_pool_handle();
  // The warm-up's cached blocks go back first (as Python's torch.cuda.graph does), so the graph's
  // private pool does not double the step's footprint.
  c10::cuda::device_synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();
  try {
    // Thread-local mode: the loader's threads may allocate pinned memory meanwhile; only this
    // thread's unsafe calls (a sync, a copy from pageable memory) invalidate the capture.
    graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
    body();
    graph->capture_end();
  } catch (const std::exception& e) {
    abandon_capture(graph, stream, pool);
    std::string reason = e.what();
    if (const auto eol = reason.find('\n'); eol != std::string::npos) reason.resize(eol);
    spdlog::warn(
        "cuda_graph: capturing the {} graph failed ({}); training continues eagerly (the step "
        "is the same, only its launches are not replayed)",
        what, reason);
    return nullptr;
  }
  graph->replay();
  return graph;
}
#else
// The CPU build captures nothing and has no streams to order.
struct SideStream {};
class SideStreamScope {
 public:
  explicit SideStreamScope(const std::optional<SideStream>&) {}
};
#endif

// Copies `src` into the static buffer `dst` (allocated like `src` on `device` the first time or
// when the shape changed: returns true then). Undefined stays undefined.
bool copy_into(at::Tensor& dst, const at::Tensor& src, const c10::Device& device) {
  if (!src.defined()) {
    const bool changed = dst.defined();
    dst = at::Tensor();
    return changed;
  }
  bool changed = false;
  if (!dst.defined() || dst.sizes() != src.sizes() || dst.strides() != src.strides() ||
      dst.scalar_type() != src.scalar_type()) {
    changed = dst.defined();
    dst = at::empty_strided(src.sizes(), src.strides(), src.options().device(device));
  }
  dst.copy_(src, /*non_blocking=*/true);
  return changed;
}

}  // namespace

struct CudaGraphStep::State {
  c10::Device device;
  int64_t warmup_batches = 3;
  at::Tensor images;  // static uint8 (B, 3, H, W), the loader's strides
  loss::GtTargets targets;
  int64_t eager_batches = 0;  // since construction or the last invalidate()
  int64_t eager_steps = 0;
  int64_t captures = 0;
  bool failed = false;
  std::optional<SideStream> stream;  // CUDA devices only
#ifdef TRAINER_WITH_CUDA
  std::unique_ptr<CapturedGraph> forward;    // A
  std::unique_ptr<CapturedGraph> optimizer;  // B
#endif

  explicit State(const c10::Device& d) : device(d) {}
  bool can_capture() const {
#ifdef TRAINER_WITH_CUDA
    return device.is_cuda() && !failed;
#else
    return false;
#endif
  }
};

CudaGraphStep::CudaGraphStep(const c10::Device& device, int64_t warmup_batches)
    : state_(std::make_unique<State>(device)) {
  state_->warmup_batches = std::max<int64_t>(1, warmup_batches);
#ifdef TRAINER_WITH_CUDA
  if (device.is_cuda()) state_->stream = c10::cuda::getStreamFromPool(false, device.index());
#endif
}

CudaGraphStep::~CudaGraphStep() = default;

bool CudaGraphStep::ready_to_capture() const {
  const State& s = *state_;
  return s.can_capture() && s.eager_batches >= s.warmup_batches && s.eager_steps >= 1;
}

void CudaGraphStep::stage(const at::Tensor& images, const loss::GtTargets& targets) {
  State& s = *state_;
  bool moved = copy_into(s.images, images, s.device);
  moved |= copy_into(s.targets.labels, targets.labels, s.device);
  moved |= copy_into(s.targets.bboxes, targets.bboxes, s.device);
  moved |= copy_into(s.targets.mask, targets.mask, s.device);
  moved |= copy_into(s.targets.keypoints, targets.keypoints, s.device);
  moved |= copy_into(s.targets.masks, targets.masks, s.device);
  // Host-side facts of the batch; the static loss reads no data-sized tensor (the label rows are
  // for the selecting path), as the static-step trace tests show.
  s.targets.overlap_masks = targets.overlap_masks;
  s.targets.static_shapes = targets.static_shapes;
  s.targets.label_rows = targets.label_rows;
  if (moved) invalidate("a static input buffer changed shape");
}

void CudaGraphStep::accumulate(const at::Tensor& images, const loss::GtTargets& targets,
                               const AccumulateBody& body, bool eager) {
  State& s = *state_;
  const SideStreamScope scope(s.stream);
  stage(images, targets);
  const auto run_body = [&] { body(s.images, s.targets); };
  if (eager || !ready_to_capture()) {
    run_body();
    if (!eager) ++s.eager_batches;
    return;
  }
#ifdef TRAINER_WITH_CUDA
  if (!s.forward) {
    s.forward = capture_and_run(run_body, "forward/backward");
    if (!s.forward) {
      s.failed = true;
      run_body();
      return;
    }
    ++s.captures;
    spdlog::info("cuda_graph: forward/loss/backward captured after {} eager batches",
                 s.eager_batches);
    return;
  }
  s.forward->replay();
#endif
}

void CudaGraphStep::optimizer_step(const Work& prepare, const Work& body) {
  State& s = *state_;
  const SideStreamScope scope(s.stream);
  prepare();
#ifdef TRAINER_WITH_CUDA
  // B only after A: a step whose gradients came from eager batches still warms up.
  if (ready_to_capture() && s.forward) {
    if (!s.optimizer) {
      s.optimizer = capture_and_run(body, "optimizer/EMA");
      if (!s.optimizer) {
        s.failed = true;
        s.forward.reset();
        prepare();
        body();
        return;
      }
      ++s.captures;
      spdlog::info("cuda_graph: clip/optimizer/EMA captured; the step now replays as 2 graphs");
      return;
    }
    s.optimizer->replay();
    return;
  }
#endif
  body();
  ++s.eager_steps;
}

void CudaGraphStep::invalidate(const std::string& why) {
  State& s = *state_;
#ifdef TRAINER_WITH_CUDA
  if (s.forward || s.optimizer) {
    spdlog::info("cuda_graph: {}: recapturing after {} eager batches", why, s.warmup_batches);
  }
  s.forward.reset();
  s.optimizer.reset();
#else
  (void)why;
#endif
  s.eager_batches = 0;
  s.eager_steps = 0;
}

bool CudaGraphStep::replaying() const {
#ifdef TRAINER_WITH_CUDA
  return state_->forward != nullptr && state_->optimizer != nullptr;
#else
  return false;
#endif
}

int64_t CudaGraphStep::captures() const {
  return state_->captures;
}

bool CudaGraphStep::fell_back() const {
  return state_->failed;
}

int64_t CudaGraphStep::eager_batches() const {
  return state_->eager_batches;
}

}  // namespace trainer::engine
