// See fine_tune_transfer.h.
#include "model/fine_tune_transfer.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace trainer::model {
namespace {

using TensorMap = std::map<std::string, at::Tensor>;

const at::Tensor* find_tensor(const NamedTensorList& list, const std::string& key) {
  for (const auto& [k, t] : list) {
    if (k == key) return &t;
  }
  return nullptr;
}

// The layer index of the Detect head (the last layer with a box tower), or -1.
int64_t head_index(const NamedTensorList& state) {
  static const std::regex box(R"(^model\.(\d+)\.cv2\.0\.0\.conv\.weight$)");
  int64_t head = -1;
  std::smatch m;
  for (const auto& entry : state) {
    if (std::regex_match(entry.first, m, box)) head = std::max<int64_t>(head, std::stoll(m[1]));
  }
  return head;
}

// The input channels of each level's box tower (the head's input widths).
std::vector<int64_t> head_input_widths(const NamedTensorList& state, int64_t head) {
  std::vector<int64_t> widths;
  for (int level = 0;; ++level) {
    const at::Tensor* w = find_tensor(state, "model." + std::to_string(head) + ".cv2." +
                                                 std::to_string(level) + ".0.conv.weight");
    if (w == nullptr || w->dim() != 4) return widths;
    widths.push_back(w->size(1));
  }
}

// The reference's is_fused(): fewer than 10 BatchNorm layers.
bool fused(const NamedTensorList& state) {
  const std::string suffix = ".running_mean";
  int64_t bn = 0;
  for (const auto& entry : state) {
    const std::string& k = entry.first;
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0)
      ++bn;
  }
  return bn < 10;
}

// The hidden width of a class branch: the input channels of level 0's output conv (0: none).
int64_t branch_width(const NamedTensorList& state, int64_t head, const std::string& branch) {
  if (head < 0) return 0;
  const at::Tensor* w =
      find_tensor(state, "model." + std::to_string(head) + "." + branch + ".0.2.weight");
  return w != nullptr && w->dim() == 4 ? w->size(1) : 0;
}

// Python's str.strip().lower() for the ASCII range (other characters are compared as given).
std::string normalised(const std::string& name) {
  auto space = [](unsigned char c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  };
  size_t b = 0, e = name.size();
  while (b < e && space(static_cast<unsigned char>(name[b]))) ++b;
  while (e > b && space(static_cast<unsigned char>(name[e - 1]))) --e;
  std::string out = name.substr(b, e - b);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The keys of the class-logit convs (the last child of each cv3 / one2one_cv3 level and of
// proto.semseg) with `nc` output channels.
std::vector<std::string> class_logit_keys(const NamedTensorList& target, int64_t nc) {
  static const std::regex child(
      R"(^(model\.\d+\.(?:(?:cv3|one2one_cv3)\.\d+|proto\.semseg))\.(\d+)\..+$)");
  std::map<std::string, int64_t> last_child;  // branch prefix -> its highest child index
  std::smatch m;
  for (const auto& entry : target) {
    if (!std::regex_match(entry.first, m, child)) continue;
    auto& last = last_child.try_emplace(m[1].str(), -1).first->second;
    last = std::max<int64_t>(last, std::stoll(m[2]));
  }
  std::vector<std::string> keys;
  for (const auto& [prefix, last] : last_child) {
    for (const char* p : {".weight", ".bias"}) {
      const std::string key = prefix + "." + std::to_string(last) + p;
      const at::Tensor* t = find_tensor(target, key);
      if (t != nullptr && t->dim() >= 1 && t->size(0) == nc) keys.push_back(key);
    }
  }
  return keys;
}

struct Remap {
  int64_t tensors = 0;
  int64_t matched = 0;
};

// _remap_cls_by_names: rows of the class-logit convs by class name; remapped keys leave `csd`.
Remap remap_class_rows(const NamedTensorList& target, const std::vector<std::string>& target_names,
                       TensorMap& csd, const std::vector<std::string>& source_names,
                       std::set<std::string>& given) {
  Remap out;
  if (placeholder_names(target_names) || placeholder_names(source_names)) return out;
  std::map<std::string, int64_t> lookup;  // a repeated source name: its last index, as a dict
  for (size_t k = 0; k < source_names.size(); ++k) {
    lookup[normalised(source_names[k])] = static_cast<int64_t>(k);
  }
  std::vector<int64_t> rows, from;  // target row <- source row
  bool identity = source_names.size() == target_names.size();
  for (size_t k = 0; k < target_names.size(); ++k) {
    const auto it = lookup.find(normalised(target_names[k]));
    const int64_t index = it == lookup.end() ? -1 : it->second;
    identity = identity && index == static_cast<int64_t>(k);
    if (index < 0) continue;
    rows.push_back(static_cast<int64_t>(k));
    from.push_back(index);
  }
  out.matched = static_cast<int64_t>(rows.size());
  if (rows.empty() || identity) return {};
  const auto nc = static_cast<int64_t>(target_names.size());
  const at::Tensor row_index = torch::tensor(rows, torch::kLong);
  const at::Tensor from_index = torch::tensor(from, torch::kLong);
  const int64_t highest = *std::max_element(from.begin(), from.end());
  for (const std::string& key : class_logit_keys(target, nc)) {
    const auto it = csd.find(key);
    if (it == csd.end()) continue;
    const at::Tensor& src = it->second;
    const at::Tensor& dst = *find_tensor(target, key);
    // Another model scale's cls conv takes another input width: its bias alone is remapped.
    if (src.dim() != dst.dim() || src.sizes().slice(1) != dst.sizes().slice(1)) continue;
    if (src.size(0) <= highest || !src.is_floating_point()) continue;  // names and rows disagree
    at::Tensor target_tensor = dst;  // shares storage with the module's tensor
    target_tensor.index_copy_(0, row_index.to(dst.device()),
                              src.index_select(0, from_index).to(dst.device(), dst.scalar_type()));
    csd.erase(it);
    given.insert(key);
    ++out.tensors;
  }
  return out;
}

}  // namespace

std::optional<ClassWidths> rebuilt_class_widths(const NamedTensorList& target,
                                                const NamedTensorList& source) {
  const int64_t head = head_index(target), source_head = head_index(source);
  if (head < 0 || source_head < 0 || fused(target) || fused(source)) return std::nullopt;
  const auto widths = head_input_widths(target, head);
  if (widths.empty() || widths != head_input_widths(source, source_head)) return std::nullopt;
  ClassWidths out;
  bool rebuilt = false;
  for (auto [branch, width] :
       {std::pair<const char*, int64_t*>{"cv3", &out.one2many}, {"one2one_cv3", &out.one2one}}) {
    const int64_t mine = branch_width(target, head, branch);
    const int64_t theirs = branch_width(source, source_head, branch);
    if (mine > 0 && theirs > 0 && mine != theirs) {
      *width = theirs;
      rebuilt = true;
    }
  }
  if (!rebuilt) return std::nullopt;
  return out;
}

ClassWidths class_widths_of(const NamedTensorList& weights) {
  const int64_t head = head_index(weights);
  return {branch_width(weights, head, "cv3"), branch_width(weights, head, "one2one_cv3")};
}

bool placeholder_names(const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != std::to_string(i)) return false;
  }
  return true;
}

FineTuneReport fine_tune_transfer(torch::nn::Module& target,
                                  const std::vector<std::string>& target_names,
                                  const NamedTensorList& source,
                                  const std::vector<std::string>& source_names) {
  torch::NoGradGuard no_grad;
  const NamedTensorList state = state_dict(target);
  TensorMap csd(source.begin(), source.end());
  FineTuneReport report;
  report.total = static_cast<int64_t>(state.size());
  std::set<std::string> given;

  const Remap remap = remap_class_rows(state, target_names, csd, source_names, given);
  report.remapped = remap.tensors;
  report.matched_classes = remap.tensors > 0 ? remap.matched : 0;

  for (const auto& [key, dst] : state) {  // intersect_dicts
    if (given.count(key) != 0) continue;
    const auto it = csd.find(key);
    if (it == csd.end()) continue;
    const at::Tensor& src = it->second;
    if (src.sizes() != dst.sizes() || src.is_floating_point() != dst.is_floating_point()) continue;
    at::Tensor(dst).copy_(src);
    given.insert(key);
  }

  const std::string first_conv = "model.0.conv.weight";
  const at::Tensor* w = find_tensor(state, first_conv);
  const auto src = csd.find(first_conv);
  if (given.count(first_conv) == 0 && w != nullptr && src != csd.end() && w->dim() == 4 &&
      src->second.dim() == 4 && w->sizes().slice(2) == src->second.sizes().slice(2)) {
    const int64_t c1 = std::min(w->size(0), src->second.size(0));
    const int64_t c2 = std::min(w->size(1), src->second.size(1));
    const at::Tensor filters = src->second.slice(0, 0, c1);
    at::Tensor part = w->slice(0, 0, c1).slice(1, 0, c2);
    part.copy_(c2 == 1 ? filters.sum(1, /*keepdim=*/true) : filters.slice(1, 0, c2));
    given.insert(first_conv);
    report.first_conv_filled = true;
  }
  report.transferred = static_cast<int64_t>(given.size());
  for (const auto& entry : state) {
    if (given.count(entry.first) == 0) report.kept_initialised.push_back(entry.first);
  }
  return report;
}

}  // namespace trainer::model
