// Weights import/export through the torch.save format (see weights_io.h).
#include "model/weights_io.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/reference_checkpoint.h"
#include "model/torch_file.h"
#include "model/torch_save.h"

namespace trainer::model {
namespace {

std::string shape_text(at::IntArrayRef sizes) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i];
  out << (sizes.size() == 1 ? ",)" : ")");
  return out.str();
}

// PyTorch's state_dict order: a module's own parameters, its own buffers, then its children.
void collect(const torch::nn::Module& m, const std::string& prefix, NamedTensorList& out) {
  for (const auto& p : m.named_parameters(false)) out.emplace_back(prefix + p.key(), p.value());
  for (const auto& b : m.named_buffers(false)) out.emplace_back(prefix + b.key(), b.value());
  for (const auto& c : m.named_children()) collect(*c.value(), prefix + c.key() + ".", out);
}

}  // namespace

NamedTensorList state_dict(const torch::nn::Module& module) {
  NamedTensorList out;
  collect(module, "", out);
  return out;
}

void save_weights(const torch::nn::Module& module, const std::filesystem::path& path) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [key, tensor] : state_dict(module)) {
    dict.insert(key, tensor.detach().to(torch::kCPU).contiguous().clone());
  }
  const std::vector<char> bytes = torch_save_bytes(c10::IValue(dict));
  core::write_file_atomically(path, std::string(bytes.begin(), bytes.end()));
}

namespace {

// Every read of a weights file goes through here; the debug line lets the CLI tests count them.
std::vector<char> read_bytes(const std::filesystem::path& path) {
  spdlog::debug("reading weights file {}", path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError("weights file not found: " + path.string());
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

DescribeProblem not_weights(const std::string& file) {
  return [file](const std::string& problem) {
    return "weights file " + file + " is not a torch.save file of a dict of tensors (" + problem +
           ")";
  };
}

}  // namespace

WeightsFile read_weights(const std::filesystem::path& path) {
  return parse_weights_file(read_bytes(path), path.string());
}

std::optional<ReferenceInfo> reference_info_of(const std::filesystem::path& path) {
  const std::vector<char> bytes = read_bytes(path);
  const TorchFile torch_file(bytes, not_weights(path.string()));
  if (!is_reference_checkpoint(torch_file.root())) return std::nullopt;
  try {
    return read_reference_record(torch_file.pickle()).info;
  } catch (const PickleError& e) {
    torch_file.fail(e.what());
  }
}

WeightsFile parse_weights_file(const std::vector<char>& bytes, const std::string& file) {
  const TorchFile torch_file(bytes, not_weights(file));
  WeightsFile out;
  if (auto reference = read_reference_checkpoint(torch_file)) {
    out.weights = std::move(reference->weights);
    out.reference = std::move(reference->info);
    return out;
  }
  const PyValue& root = torch_file.root();
  if (root.is(PyKind::kDict) && root.get("train_args") != nullptr) {
    throw core::InputError("weights file " + file +
                           " is a reference checkpoint that holds no model weights (its 'model' "
                           "and 'ema' are empty)");
  }
  const c10::IValue value = torch_file.to_ivalue(root);
  if (!value.isGenericDict()) {
    throw core::InputError("weights file " + file + " holds a " + value.tagKind() +
                           ", expected a dict {name: tensor} or a reference checkpoint");
  }
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString()) {
      throw core::InputError("weights file " + file + ": a key is a " + entry.key().tagKind() +
                             ", expected a string");
    }
    const std::string key = entry.key().toStringRef();
    if (!entry.value().isTensor()) {
      throw core::InputError("weights file " + file + ": key '" + key + "' holds a " +
                             entry.value().tagKind() + ", expected a tensor");
    }
    out.weights.emplace_back(key, entry.value().toTensor());
  }
  return out;
}

NamedTensorList read_weights_file(const std::filesystem::path& path) {
  return read_weights(path).weights;
}

NamedTensorList parse_weights(const std::vector<char>& bytes, const std::string& file) {
  return parse_weights_file(bytes, file).weights;
}

void load_weights(torch::nn::Module& module, const NamedTensorList& weights,
                  const std::string& source) {
  std::map<std::string, at::Tensor> given(weights.begin(), weights.end());
  std::vector<std::string> problems;
  const NamedTensorList targets = state_dict(module);
  std::map<std::string, bool> known;
  for (const auto& [key, target] : targets) {
    known[key] = true;
    auto it = given.find(key);
    if (it == given.end()) {
      problems.push_back("missing key '" + key + "' " + shape_text(target.sizes()));
      continue;
    }
    const at::Tensor& t = it->second;
    if (t.sizes() != target.sizes()) {
      problems.push_back("shape mismatch for '" + key + "': file " + shape_text(t.sizes()) +
                         ", model " + shape_text(target.sizes()));
    } else if (t.is_floating_point() != target.is_floating_point()) {
      problems.push_back("dtype mismatch for '" + key + "': file " +
                         std::string(c10::toString(t.scalar_type())) + ", model " +
                         c10::toString(target.scalar_type()));
    }
  }
  for (const auto& [key, t] : weights) {
    if (!known.count(key))
      problems.push_back("unexpected key '" + key + "' " + shape_text(t.sizes()));
  }
  if (!problems.empty()) {
    // The first few name the kind of mismatch; all of them go to the debug log (-v).
    constexpr size_t kShown = 5;
    std::string msg = source + " does not fit the model (" + std::to_string(problems.size()) +
                      " problem" + (problems.size() == 1 ? "" : "s") + "):";
    for (size_t i = 0; i < problems.size() && i < kShown; ++i) msg += "\n  " + problems[i];
    if (problems.size() > kShown) {
      msg += "\n  ... and " + std::to_string(problems.size() - kShown) + " more (-v lists them)";
      for (const auto& p : problems) spdlog::debug("{}: {}", source, p);
    }
    throw core::InputError(msg);
  }
  torch::NoGradGuard no_grad;
  for (const auto& [key, target] : targets) target.copy_(given.at(key));
}

void load_weights(torch::nn::Module& module, const std::filesystem::path& path) {
  load_weights(module, read_weights_file(path), "weights file " + path.string());
}

}  // namespace trainer::model
