// The hidden width (c3) of the Detect head's class branches, when it is not the reference's
// default max(ch0, min(nc, 100)).
//
// Why: the default follows the class count, so a model fine-tuned from weights with another
// class count would re-initialise its hidden class layers. 8.4.190's DetectionModel.load
// rebuilds the branch at the source's width instead (model/fine_tune_transfer.h); the width is
// then part of the architecture and is recorded with the run (`cls_width`) so that val, predict
// and resume build the same model.
#pragma once

#include <cstdint>
#include <string>

namespace trainer::model {

struct ClassWidths {
  int64_t one2many = 0;  // cv3; 0: the default
  int64_t one2one = 0;   // one2one_cv3 (end-to-end heads); 0: the default

  bool is_default() const { return one2many == 0 && one2one == 0; }
  bool operator==(const ClassWidths& o) const {
    return one2many == o.one2many && one2one == o.one2one;
  }
};

// The largest width accepted (the reference's widest default is 320, yolo26x).
inline constexpr int64_t kMaxClassWidth = 4096;

// The reference's default: max(ch0, min(nc, 100)).
int64_t default_class_width(int64_t ch0, int64_t nc);

// `cls_width` as the config writes it: "" (defaults), "N" (both branches) or "[N, M]"
// (one-to-many, one-to-one; 0 there keeps that branch's default). Throws core::ConfigError naming
// the key for anything else, or a width outside 1..kMaxClassWidth.
ClassWidths parse_class_widths(const std::string& text);

// The inverse of parse_class_widths: "" for defaults, "N" when both are equal, else "[N, M]".
std::string class_widths_text(const ClassWidths& widths);

}  // namespace trainer::model
