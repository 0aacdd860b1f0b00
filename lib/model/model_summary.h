// The model summary `trainer info` prints: the layer table (index, from, n, params, module,
// arguments) and the totals the reference reports (layers, parameters, gradients, GFLOPs).
//
// Why: users compare our model with the reference's printout line by line; the totals use the
// reference's conventions (leaf-module count with one shared SiLU, thop-style FLOPs at a 32 px
// input scaled to imgsz) so equal models print equal numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/detection_model.h"

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
  FlopCount flops_at_32;   // counts of one forward at a 32x32 input (training form, both heads)
  double gflops = 0;  // at imgsz: 2 * (conv MACs + 4 * BN elements + upsample elements), scaled
};

// Runs one forward at 32x32 to count FLOPs, as the reference does, and scales to imgsz.
ModelSummary summarize_model(DetectionModelImpl& model, int64_t imgsz = 640);

// The table and the one-line summary, e.g.
// "yolo26n summary: 260 layers, 2,572,280 parameters, 2,572,280 gradients, 6.1 GFLOPs".
std::string format_summary(const ModelSummary& summary, const std::string& title);

// The reference's published figures for a built-in model with nc=80 (reference-behaviour.md
// 4.1): exact parameter count (training form, both heads), GFLOPs at 640, and the printed layer
// count where known (n scales only; 0 otherwise): yolo26n's 260 is a leaf-module count (current
// reference), yolo11n's 319 an all-module count (the older reference its yaml comment came from).
struct ReferenceFigures {
  int64_t parameters = 0;
  double gflops = 0;
  int64_t layers = 0;   // leaf modules
  int64_t modules = 0;  // all modules
};
std::optional<ReferenceFigures> reference_figures(const ModelName& name);

// 2572280 -> "2,572,280".
std::string thousands(int64_t value);

}  // namespace trainer::model
