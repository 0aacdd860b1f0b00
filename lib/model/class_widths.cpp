// See class_widths.h.
#include "model/class_widths.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "core/error.h"

namespace trainer::model {
namespace {

[[noreturn]] void refuse_widths(const std::string& text, const std::string& why) {
  throw core::ConfigError("cls_width: '" + text + "' " + why +
                          " (give N for both class branches, [N, M] for the one-to-many and the "
                          "one-to-one branch, or null for the defaults)");
}

// A width; 0 (the default) only inside a list.
int64_t parse_width(const std::string& text, const std::string& item, bool allow_default) {
  if (item.empty() || !std::all_of(item.begin(), item.end(),
                                   [](unsigned char c) { return std::isdigit(c) != 0; })) {
    refuse_widths(text, "is not a width");
  }
  const int64_t lowest = allow_default ? 0 : 1;
  if (item.size() > 6 || std::stoll(item) < lowest || std::stoll(item) > kMaxClassWidth) {
    refuse_widths(text,
                  "is outside " + std::to_string(lowest) + ".." + std::to_string(kMaxClassWidth));
  }
  return std::stoll(item);
}

}  // namespace

int64_t default_class_width(int64_t ch0, int64_t nc) {
  return std::max(ch0, std::min<int64_t>(nc, 100));
}

ClassWidths parse_class_widths(const std::string& text) {
  std::string s;
  for (const char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  }
  if (s.empty()) return {};
  if (s.front() != '[') {
    const int64_t w = parse_width(text, s, false);
    return {w, w};
  }
  if (s.back() != ']') refuse_widths(text, "is not a list");
  std::vector<int64_t> widths;
  const std::string inner = s.substr(1, s.size() - 2);
  size_t pos = 0;
  while (pos <= inner.size()) {
    const size_t comma = std::min(inner.find(',', pos), inner.size());
    widths.push_back(parse_width(text, inner.substr(pos, comma - pos), true));
    pos = comma + 1;
  }
  if (widths.size() != 2) refuse_widths(text, "must list two widths");
  return {widths[0], widths[1]};
}

std::string class_widths_text(const ClassWidths& widths) {
  if (widths.is_default()) return "";
  if (widths.one2many == widths.one2one) return std::to_string(widths.one2many);
  return "[" + std::to_string(widths.one2many) + ", " + std::to_string(widths.one2one) + "]";
}

}  // namespace trainer::model
