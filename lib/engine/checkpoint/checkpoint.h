// The training checkpoint: everything needed to continue a run exactly, in one file.
//
// Why: a resume must give the same weights as an uninterrupted run, and a kill during a write must
// never cost the previous checkpoint. The file is a `torch.save`-format pickle of one dict
// (readable with plain `torch.load(path)` in Python, whose default is weights_only=True), written
// to a temporary file, flushed and renamed; it carries a format tag and version that the loader
// checks before trusting any field.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace trainer::engine {

inline constexpr const char* kCheckpointFormat = "trainer-checkpoint";
// 2: parameter groups in 8.4.190's order (8 under MuSGD), untagged pickle. A version-1 file still
// gives its weights (trainer val, fine-tuning) but cannot be resumed: its optimizer state is keyed
// by the old group order.
inline constexpr int64_t kCheckpointVersion = 2;
inline constexpr int64_t kOldestResumableCheckpointVersion = 2;

using TensorMap = std::map<std::string, at::Tensor>;

struct Checkpoint {
  int64_t version = kCheckpointVersion;  // the format version it was written with
  std::string config_yaml;               // the resolved config the run started with
  int64_t epoch = -1;                    // last completed epoch (0-based)
  int64_t iteration = 0;                 // optimizer-loop iteration `ni` of the next batch
  int64_t last_opt_step = -1;            // `ni` of the last optimizer step (gradient accumulation)
  double best_fitness = 0.0;
  int64_t best_epoch = -1;
  int64_t loss_updates = 0;    // end-to-end loss schedule (ProgLoss) updates
  std::string optimizer_name;  // "MuSGD", "SGD", "AdamW"
  int64_t world_size = 1;      // data-parallel ranks that trained it (1 when absent)
  std::string precision;       // what it computed in, "bf16" / "fp32" ("" when absent)
  std::string run_id;          // the run it belongs to (FitRun; "" when absent): a node's file at
                               // the same path from another run is never taken for this run's
  std::string results_csv;     // results.csv up to this epoch, for a node without the run folder
  TensorMap model;             // live weights and buffers, reference key names
  TensorMap ema;               // ModelEma::state_dict() (includes ema.updates)
  TensorMap optimizer;         // Optimizer::state_dict()
  TensorMap pending_grads;     // gradients accumulated since the last optimizer step (by name)
  at::Tensor rng_cpu;          // the CPU generator state
  at::Tensor rng_cuda;         // the CUDA generator state (undefined on CPU runs)
  std::string date;            // ISO time of writing
};

// The EMA weights of a checkpoint under model state-dict keys (optim::ModelEma::weights_in).
std::vector<std::pair<std::string, at::Tensor>> ema_weights(const Checkpoint& checkpoint);

// How many times this process has read a checkpoint file (load_checkpoint). For tests that check
// a file is read once (a `.ckpt` given as model=).
int64_t checkpoint_loads();

// Writes atomically (temporary file, fsync, rename). Throws std::runtime_error on I/O errors; the
// previous file under `path` is then untouched.
void save_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& path);

// Reads and checks a checkpoint. Throws core::InputError naming the file for a missing, truncated
// or foreign file, a newer format version, or a missing/mistyped field.
Checkpoint load_checkpoint(const std::filesystem::path& path);

// The same checks on a checkpoint's bytes already in memory (`file` names it in messages).
Checkpoint parse_checkpoint(const std::vector<char>& bytes, const std::string& file);

}  // namespace trainer::engine
