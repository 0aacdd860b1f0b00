// See checkpoint.h. One c10 dict in the torch.save zip format (model/torch_save.h).
#include "engine/checkpoint/checkpoint.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <atomic>
#include <fstream>
#include <iterator>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/torch_save.h"

namespace trainer::engine {
namespace {

c10::Dict<std::string, at::Tensor> to_dict(const TensorMap& map) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [key, tensor] : map) dict.insert(key, tensor.detach().cpu().contiguous());
  return dict;
}

class Reader {
 public:
  Reader(const c10::impl::GenericDict& dict, std::string file)
      : dict_(dict), file_(std::move(file)) {}

  const c10::IValue& get(const std::string& key) const {
    auto it = dict_.find(key);
    if (it == dict_.end()) fail(fmt::format("missing field \"{}\"", key));
    return it->value();
  }
  std::string string(const std::string& key) const {
    const auto& v = get(key);
    if (!v.isString()) fail(fmt::format("field \"{}\" is not a string", key));
    return v.toStringRef();
  }
  int64_t integer(const std::string& key) const {
    const auto& v = get(key);
    if (!v.isInt()) fail(fmt::format("field \"{}\" is not an integer", key));
    return v.toInt();
  }
  double real(const std::string& key) const {
    const auto& v = get(key);
    if (!v.isDouble()) fail(fmt::format("field \"{}\" is not a number", key));
    return v.toDouble();
  }
  at::Tensor tensor(const std::string& key, bool optional = false) const {
    auto it = dict_.find(key);
    if (it == dict_.end() || it->value().isNone()) {
      if (optional) return {};
      fail(fmt::format("missing tensor \"{}\"", key));
    }
    if (!it->value().isTensor()) fail(fmt::format("field \"{}\" is not a tensor", key));
    return it->value().toTensor();
  }
  TensorMap tensors(const std::string& key) const {
    const auto& v = get(key);
    if (!v.isGenericDict()) fail(fmt::format("field \"{}\" is not a dict of tensors", key));
    TensorMap out;
    for (const auto& entry : v.toGenericDict()) {
      if (!entry.key().isString() || !entry.value().isTensor()) {
        fail(fmt::format("field \"{}\" holds a non-tensor entry", key));
      }
      out.emplace(entry.key().toStringRef(), entry.value().toTensor());
    }
    return out;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw core::InputError(fmt::format("{}: checkpoint {}", file_, what));
  }

 private:
  const c10::impl::GenericDict& dict_;
  std::string file_;
};

}  // namespace

void save_checkpoint(const Checkpoint& c, const std::filesystem::path& path) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("format", std::string(kCheckpointFormat));
  dict.insert("version", c.version);
  dict.insert("config_yaml", c.config_yaml);
  dict.insert("epoch", c.epoch);
  dict.insert("iteration", c.iteration);
  dict.insert("last_opt_step", c.last_opt_step);
  dict.insert("best_fitness", c.best_fitness);
  dict.insert("best_epoch", c.best_epoch);
  dict.insert("loss_updates", c.loss_updates);
  dict.insert("optimizer_name", c.optimizer_name);
  dict.insert("world_size", c.world_size);
  dict.insert("precision", c.precision);
  dict.insert("run_id", c.run_id);
  dict.insert("results_csv", c.results_csv);
  dict.insert("model", to_dict(c.model));
  dict.insert("ema", to_dict(c.ema));
  dict.insert("optimizer", to_dict(c.optimizer));
  dict.insert("pending_grads", to_dict(c.pending_grads));
  dict.insert("rng_cpu", c.rng_cpu.defined() ? c10::IValue(c.rng_cpu) : c10::IValue());
  dict.insert("rng_cuda", c.rng_cuda.defined() ? c10::IValue(c.rng_cuda) : c10::IValue());
  dict.insert("date", c.date);
  dict.insert("done", true);  // written last in the dict; checked on load
  // Without TorchScript type tags, so that Python's plain torch.load(path) reads it.
  const std::vector<char> bytes = model::torch_save_bytes(c10::IValue(dict));
  std::filesystem::create_directories(path.parent_path().empty() ? "." : path.parent_path());
  core::write_file_atomically(path, std::string_view(bytes.data(), bytes.size()));
}

namespace {
std::atomic<int64_t> checkpoint_load_count{0};
}  // namespace

int64_t checkpoint_loads() {
  return checkpoint_load_count.load();
}

Checkpoint load_checkpoint(const std::filesystem::path& path) {
  ++checkpoint_load_count;
  spdlog::debug("reading weights file {}", path.string());  // counted by the CLI tests
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError(fmt::format("{}: cannot open checkpoint", file));
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  return parse_checkpoint(bytes, file);
}

Checkpoint parse_checkpoint(const std::vector<char>& bytes, const std::string& file) {
  const c10::IValue root = model::torch_load_bytes(bytes, [&](const std::string& problem) {
    return fmt::format(
        "{}: not a readable checkpoint (truncated, corrupt, or not written by trainer: {})", file,
        problem);
  });
  if (!root.isGenericDict()) {
    throw core::InputError(fmt::format("{}: not a trainer checkpoint (no top-level dict)", file));
  }
  const auto dict = root.toGenericDict();
  const Reader r(dict, file);
  if (dict.find("format") == dict.end() || r.string("format") != kCheckpointFormat) {
    r.fail("is not a trainer checkpoint (format tag missing)");
  }
  const int64_t version = r.integer("version");
  if (version > kCheckpointVersion) {
    r.fail(fmt::format("has format version {}, this trainer reads up to {}", version,
                       kCheckpointVersion));
  }
  if (dict.find("done") == dict.end()) r.fail("is incomplete (no completion marker)");
  Checkpoint c;
  c.version = version;
  c.config_yaml = r.string("config_yaml");
  c.epoch = r.integer("epoch");
  c.iteration = r.integer("iteration");
  c.last_opt_step = r.integer("last_opt_step");
  c.best_fitness = r.real("best_fitness");
  c.best_epoch = r.integer("best_epoch");
  c.loss_updates = r.integer("loss_updates");
  c.optimizer_name = r.string("optimizer_name");
  if (dict.find("world_size") != dict.end()) c.world_size = r.integer("world_size");
  if (dict.find("precision") != dict.end()) c.precision = r.string("precision");
  if (dict.find("run_id") != dict.end()) c.run_id = r.string("run_id");
  if (dict.find("results_csv") != dict.end()) c.results_csv = r.string("results_csv");
  c.model = r.tensors("model");
  c.ema = r.tensors("ema");
  c.optimizer = r.tensors("optimizer");
  if (dict.find("pending_grads") != dict.end()) c.pending_grads = r.tensors("pending_grads");
  c.rng_cpu = r.tensor("rng_cpu", /*optional=*/true);
  c.rng_cuda = r.tensor("rng_cuda", /*optional=*/true);
  c.date = r.string("date");
  return c;
}

}  // namespace trainer::engine
