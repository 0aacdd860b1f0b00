// See reference_pickle.h.
// Tested by tests/parity/test_reference_checkpoint_parity.cpp: read_reference_record: version,
//   names, nc, weights of reference checkpoints (needs the reference; fuzz_pickle replays seeds for
//   robustness only).
#include "model/reference_pickle.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <set>

namespace trainer::model {
namespace {

constexpr int kMaxModuleDepth = 64;

[[noreturn]] void refuse_pickle(const std::string& what) {
  throw PickleError(what);
}

bool is_module(const PyValue* v) {
  return v != nullptr && v->is(PyKind::kObject) && v->get("_modules") != nullptr;
}

std::string string_or_empty(const PyValue* v) {
  return v != nullptr && v->is(PyKind::kString) ? v->text : std::string();
}

class StateWalk {
 public:
  StateWalk(ReferenceRecord& out, size_t max_keys) : out_(out), max_keys_(max_keys) {}

  void module(const PyValue& m, const std::string& prefix, int depth) {
    if (depth > kMaxModuleDepth) {
      refuse_pickle(fmt::format("its modules nest deeper than {} levels", kMaxModuleDepth));
    }
    if (!active_.insert(&m).second)
      refuse_pickle("a module in it contains itself (" + prefix + ")");
    std::set<std::string> non_persistent;
    if (const PyValue* names = m.get("_non_persistent_buffers_set")) {
      for (const PyValue* n : names->items) {
        if (n->is(PyKind::kString)) non_persistent.insert(n->text);
      }
    }
    tensors(m.get("_parameters"), prefix, {});
    tensors(m.get("_buffers"), prefix, non_persistent);
    const PyValue* children = m.get("_modules");
    if (!children->is(PyKind::kDict))
      refuse_pickle("module " + prefix + " has _modules that is no dict");
    for (const auto& [name, child] : children->entries) {
      if (child->is(PyKind::kNone)) continue;
      if (!name->is(PyKind::kString) || !is_module(child)) {
        refuse_pickle("module " + prefix + " has a child that is no module");
      }
      module(*child, prefix + name->text + ".", depth + 1);
    }
    active_.erase(&m);
  }

 private:
  void tensors(const PyValue* dict, const std::string& prefix, const std::set<std::string>& skip) {
    if (dict == nullptr) return;
    if (!dict->is(PyKind::kDict))
      refuse_pickle("module " + prefix + " has parameters that are no dict");
    for (const auto& [name, value] : dict->entries) {
      if (!name->is(PyKind::kString))
        refuse_pickle("module " + prefix + " has a parameter without a name");
      if (value->is(PyKind::kNone) || skip.count(name->text) != 0) continue;
      if (!value->is(PyKind::kTensor)) {
        refuse_pickle("parameter " + prefix + name->text + " is a " + value->describe() +
                      ", not a tensor");
      }
      if (out_.state.size() >= max_keys_) {
        refuse_pickle("its module tree names more tensors than it stores (shared modules?)");
      }
      out_.state.emplace_back(prefix + name->text, value);
    }
  }

  ReferenceRecord& out_;
  size_t max_keys_;
  std::set<const PyValue*> active_;
};

// A flow YAML scalar or list for a train_args value ("null" for what YAML cannot say plainly).
std::string yaml_value(const PyValue& v, int depth = 0) {
  switch (v.kind) {
    case PyKind::kNone:
      return "null";
    case PyKind::kBool:
      return v.flag ? "true" : "false";
    case PyKind::kInt:
      return std::to_string(v.integer);
    case PyKind::kFloat:
      if (std::isnan(v.real)) return ".nan";
      if (std::isinf(v.real)) return v.real > 0 ? ".inf" : "-.inf";
      return fmt::format("{}", v.real);
    case PyKind::kString: {
      std::string out = "\"";
      for (const char c : v.text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
          out += '\\';
          out += c;
        } else if (u < 0x20 || u == 0x7f) {
          out += fmt::format("\\x{:02x}", u);
        } else {
          out += c;
        }
      }
      return out + "\"";
    }
    case PyKind::kList:
    case PyKind::kTuple: {
      if (depth > 4) return "null";
      std::string out = "[";
      for (size_t i = 0; i < v.items.size(); ++i) {
        out += (i ? ", " : "") + yaml_value(*v.items[i], depth + 1);
      }
      return out + "]";
    }
    case PyKind::kObject:
      // pathlib paths: their parts joined.
      if (v.text.rfind("pathlib.", 0) == 0) {
        std::string path;
        for (const PyValue* part : v.items) {
          if (!part->is(PyKind::kString)) return "null";
          if (!path.empty() && path.back() != '/') path += '/';
          path += part->text;
        }
        PyValue s;
        s.kind = PyKind::kString;
        s.text = path;
        return yaml_value(s);
      }
      return "null";
    default:
      return "null";
  }
}

std::string train_args_yaml(const PyValue* args) {
  if (args == nullptr || !args->is(PyKind::kDict)) return "";
  std::string out;
  for (const auto& [key, value] : args->entries) {
    if (!key->is(PyKind::kString) || key->text.empty()) continue;
    bool plain = true;
    for (const char c : key->text) {
      plain = plain && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_');
    }
    if (!plain) continue;
    out += key->text + ": " + yaml_value(*value) + "\n";
  }
  return out;
}

}  // namespace

bool is_reference_checkpoint(const PyValue& root) {
  return root.is(PyKind::kDict) && (is_module(root.get("ema")) || is_module(root.get("model")));
}

ReferenceRecord read_reference_record(const PickleDocument& doc) {
  const PyValue& root = *doc.root;
  if (!is_reference_checkpoint(root))
    refuse_pickle("it is not a reference checkpoint (no pickled model)");
  ReferenceRecord record;
  ReferenceInfo& out = record.info;
  const PyValue* model = root.get("ema");
  out.source = "ema";
  if (!is_module(model)) {
    model = root.get("model");
    out.source = "model";
  }
  out.model_class = model->text;
  StateWalk(record, 2 * doc.tensors.size() + 16).module(*model, "", 0);

  const PyValue* layers = model->get("_modules")->get("model");
  if (is_module(layers)) {
    const auto& entries = layers->get("_modules")->entries;
    if (!entries.empty() && entries.back().second->is(PyKind::kObject)) {
      out.head_class = entries.back().second->text;
    }
  }
  if (const PyValue* yaml = model->get("yaml"); yaml != nullptr && yaml->is(PyKind::kDict)) {
    out.yaml_file = string_or_empty(yaml->get("yaml_file"));
    out.scale = string_or_empty(yaml->get("scale"));
    if (const PyValue* nc = yaml->get("nc"); nc != nullptr && nc->is(PyKind::kInt)) {
      out.nc = nc->integer;
    }
    if (const PyValue* k = yaml->get("kpt_shape")) {
      for (const PyValue* d : k->items) {
        if (d->is(PyKind::kInt)) out.kpt_shape.push_back(d->integer);
      }
    }
  }
  if (const PyValue* names = model->get("names")) {
    if (names->is(PyKind::kDict)) {
      for (const auto& [k, v] : names->entries) {
        if (k->is(PyKind::kInt) && v->is(PyKind::kString))
          out.names.emplace_back(k->integer, v->text);
      }
    } else if (names->is(PyKind::kList)) {
      for (size_t i = 0; i < names->items.size(); ++i) {
        out.names.emplace_back(static_cast<int64_t>(i), string_or_empty(names->items[i]));
      }
    }
  }
  const PyValue* args = root.get("train_args");
  if (args != nullptr && args->is(PyKind::kDict)) out.task = string_or_empty(args->get("task"));
  out.train_args_yaml = train_args_yaml(args);
  if (const PyValue* epoch = root.get("epoch"); epoch != nullptr && epoch->is(PyKind::kInt)) {
    out.epoch = epoch->integer;
  }
  out.date = string_or_empty(root.get("date"));
  out.version = string_or_empty(root.get("version"));
  const PyValue* optimizer = root.get("optimizer");
  out.has_optimizer = optimizer != nullptr && !optimizer->is(PyKind::kNone);
  return record;
}

}  // namespace trainer::model
