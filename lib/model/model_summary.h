// The model summary `trainer info` prints: the layer table (index, from, n, params, module,
// arguments) and the totals the reference reports (layers, parameters, gradients, GFLOPs).
//
// Why: users compare our model with the reference's printout line by line; the totals use the
// reference's conventions (leaf-module count with the reference's shared SiLUs, thop-style FLOPs
// at a 32 px input scaled to imgsz) so equal models print equal numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/yolo_model.h"

namespace trainer::model {

struct LayerRow {
  int index = 0;
  std::string from;  // "-1", "[-1, 6]", "[16, 19, 22]"
  int repeats = 1;
  int64_t params = 0;
  std::string module;
  std::string arguments;
};

struct ModelSummary {
  std::vector<LayerRow> rows;
  int64_t layers = 0;      // leaf modules, as the current reference counts them
  int64_t modules = 0;     // all modules, as older references counted (yolo11n: 319)
  int64_t parameters = 0;  // all parameters (the frozen DFL weights included)
  int64_t gradients = 0;   // parameters with requires_grad
  FlopCount flops_at_32;   // counts of one eval forward at 32x32 (both heads, then the decode)
  // At imgsz: 2 * ((conv MACs + 4 * BN elements) * a + attention MACs * a^2), a = (imgsz / 32)^2.
  double gflops = 0;
};

// Runs one forward at 32x32 to count FLOPs, as the reference does, and scales to imgsz.
ModelSummary summarize_model(YoloModelImpl& model, int64_t imgsz = 640);

// The table and the one-line summary, e.g.
// "yolo26n summary: 260 layers, 2,572,280 parameters, 2,572,280 gradients, 6.2 GFLOPs".
std::string format_summary(const ModelSummary& summary, const std::string& title);

// The reference's figures for a built-in model with nc=80, measured with Ultralytics 8.4.190
// (tests/parity/reference_info.py): exact parameter count (training form, both heads), GFLOPs at
// 640 unrounded (it prints them to 0.1), the printed layer count (leaf modules, current
// reference) and the all-module count (what older references printed, e.g. yolo11n's 319).
struct ReferenceFigures {
  int64_t parameters = 0;
  double gflops = 0;    // unrounded
  int64_t layers = 0;   // leaf modules
  int64_t modules = 0;  // all modules
};
std::optional<ReferenceFigures> reference_figures(const ModelName& name);

// 2572280 -> "2,572,280".
std::string thousands(int64_t value);

}  // namespace trainer::model
