// See restricted_unpickler.h. What the opcodes (pickle_opcodes.cpp) hand over to: the integers of
// text and LONG opcodes, GLOBAL against the allow-list, REDUCE/NEWOBJ of an allowed class as an
// inert record, tensors rebuilt as checked views on persistent-id storages, and the document.
#include "model/restricted_unpickler.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "model/pickle_allow_list.h"
#include "model/pickle_machine.h"

namespace trainer::model {

// A name from the file as a message may show it: control bytes replaced, at most 80 characters.
std::string printable(std::string_view text) {
  std::string out(text.substr(0, 80));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text.size() > out.size() ? out + "..." : out;
}

int64_t PickleMachine::text_integer(std::string_view line) {
  std::string s(line);
  if (!s.empty() && s.back() == 'L') s.pop_back();  // LONG's suffix
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) {
    fail(fmt::format("has an integer '{}' it cannot read", printable(line)));
  }
  return v;
}

int64_t PickleMachine::long_integer(std::string_view bytes) {
  if (bytes.size() > 8) fail("has an integer wider than 64 bits");
  const auto p = reinterpret_cast<const unsigned char*>(bytes.data());
  uint64_t v = little_endian(p, bytes.size());
  if (!bytes.empty() && bytes.size() < 8 && (p[bytes.size() - 1] & 0x80) != 0) {
    v |= ~uint64_t{0} << (8 * bytes.size());
  }
  return static_cast<int64_t>(v);
}

void PickleMachine::global(std::string_view module, std::string_view name) {
  const std::string_view canonical = canonical_module(module);
  const auto callable = allowed_global(canonical, name);
  if (!callable) {
    fail(fmt::format("names {}.{}, which is not on the allow-list", printable(module),
                     printable(name)));
  }
  PyValue* g = make(PyKind::kGlobal);
  g->text = fmt::format("{}.{}", canonical, name);
  callables_[g] = *callable;
  push(g);
}

PyValue* PickleMachine::rebuild_tensor(const PyValue& args) {
  const auto bad = [&] { fail("rebuilds a tensor from arguments it cannot check"); };
  if (!args.is(PyKind::kTuple) || args.items.size() < 4) bad();
  const PyValue& storage = *args.items[0];
  const PyValue& offset = *args.items[1];
  const PyValue& sizes = *args.items[2];
  const PyValue& strides = *args.items[3];
  if (!storage.is(PyKind::kStorage) || !offset.is(PyKind::kInt) || !sizes.is(PyKind::kTuple) ||
      !strides.is(PyKind::kTuple) || sizes.items.size() != strides.items.size()) {
    bad();
  }
  if (offset.integer < 0) fail("rebuilds a tensor at a negative offset");
  PickledTensor t;
  t.storage = storage.index;
  t.offset = offset.integer;
  // The last element the view reaches: offset + sum((size - 1) * stride), unless it is empty.
  uint64_t last = static_cast<uint64_t>(offset.integer);
  bool empty = false;
  bool overflow = false;
  for (size_t i = 0; i < sizes.items.size(); ++i) {
    const PyValue& size = *sizes.items[i];
    const PyValue& stride = *strides.items[i];
    if (!size.is(PyKind::kInt) || !stride.is(PyKind::kInt)) bad();
    if (size.integer < 0 || stride.integer < 0) {
      fail("rebuilds a tensor with a negative size or stride");
    }
    t.sizes.push_back(size.integer);
    t.strides.push_back(stride.integer);
    uint64_t reach = 0;
    if (size.integer == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(static_cast<uint64_t>(size.integer - 1),
                                      static_cast<uint64_t>(stride.integer), &reach) ||
               __builtin_add_overflow(last, reach, &last)) {
      overflow = true;
    }
  }
  const uint64_t elements = doc_.storages[storage.index].elements;
  if (!empty && (overflow || last >= elements)) {
    fail(fmt::format("rebuilds a tensor that reaches past its storage of {} elements", elements));
  }
  doc_.tensors.push_back(std::move(t));
  PyValue* v = make(PyKind::kTensor);
  v->index = doc_.tensors.size() - 1;
  return v;
}

PyValue* PickleMachine::call(const PyValue& callee, const PyValue& args) {
  if (!callee.is(PyKind::kGlobal))
    fail("calls " + callee.describe() + ", which is not a named callable");
  if (!args.is(PyKind::kTuple)) fail("calls " + callee.text + " without an argument tuple");
  const auto& a = args.items;
  switch (callables_.at(&callee)) {
    case PickleCallable::kRebuildTensor:
      return rebuild_tensor(args);
    case PickleCallable::kRebuildParam:
      if (a.empty() || !a[0]->is(PyKind::kTensor)) fail("rebuilds a parameter without a tensor");
      return a[0];
    case PickleCallable::kRebuildFromType:
      // (func, type, args, state): a tensor (sub)class rebuilt by func(*args).
      if (a.size() < 3 || !a[0]->is(PyKind::kGlobal)) {
        fail("rebuilds a tensor subclass from arguments it cannot check");
      }
      if (callables_.at(a[0]) == PickleCallable::kRebuildFromType)
        fail("nests tensor subclass rebuilds");
      return call(*a[0], *a[2]);
    case PickleCallable::kOrderedDict: {
      PyValue* d = make(PyKind::kDict);
      if (!a.empty()) {
        if (!a[0]->is(PyKind::kList) && !a[0]->is(PyKind::kTuple)) {
          fail("builds an OrderedDict from a " + a[0]->describe());
        }
        for (PyValue* pair : a[0]->items) {
          if (!pair->is(PyKind::kTuple) && !pair->is(PyKind::kList)) fail("has a bad dict item");
          if (pair->items.size() != 2) fail("has a bad dict item");
          d->entries.emplace_back(pair->items[0], pair->items[1]);
        }
      }
      return d;
    }
    case PickleCallable::kSet:
      if (a.empty()) return sequence(PyKind::kSet, {});
      if (!a[0]->is(PyKind::kList) && !a[0]->is(PyKind::kTuple) && !a[0]->is(PyKind::kSet)) {
        fail("builds a set from a " + a[0]->describe());
      }
      return sequence(PyKind::kSet, a[0]->items);
    case PickleCallable::kSize:
      if (a.empty()) return sequence(PyKind::kTuple, {});
      if (!a[0]->is(PyKind::kTuple) && !a[0]->is(PyKind::kList)) {
        fail("builds a torch.Size from a " + a[0]->describe());
      }
      return sequence(PyKind::kTuple, a[0]->items);
    case PickleCallable::kEncode: {
      // Protocol 2's bytes: _codecs.encode(the bytes as latin-1 text, 'latin1').
      if (a.size() != 2 || !a[0]->is(PyKind::kString) || !a[1]->is(PyKind::kString) ||
          (a[1]->text != "latin1" && a[1]->text != "latin-1")) {
        fail("calls _codecs.encode other than as protocol 2 bytes");
      }
      std::string out;
      const std::string& s = a[0]->text;
      for (size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
          out.push_back(static_cast<char>(c));
        } else if ((c == 0xc2 || c == 0xc3) && i + 1 < s.size()) {  // U+0080..U+00FF
          out.push_back(static_cast<char>(((c & 0x03) << 6) | (s[++i] & 0x3f)));
        } else {
          fail("encodes text beyond latin-1 as bytes");
        }
      }
      return text(PyKind::kBytes, out);
    }
    case PickleCallable::kFirstArgument:
      if (a.empty()) fail("calls " + callee.text + " without an argument");
      return a[0];
    case PickleCallable::kStorageType:
      fail("calls the storage type " + callee.text + " (only persistent ids name storages)");
    case PickleCallable::kRecord:
      break;
  }
  PyValue* object = make(PyKind::kObject);
  object->text = callee.text;
  object->items = a;
  return object;
}

void PickleMachine::reduce() {
  PyValue* args = pop();
  PyValue* callee = pop();
  push(call(*callee, *args));
}

// ('storage', torch.<Type>Storage, key, location, numel)
void PickleMachine::persistent_id() {
  const PyValue* id = pop();
  const char* not_storage =
      "has a persistent id that is not ('storage', type, key, location, numel)";
  if (!id->is(PyKind::kTuple) || id->items.size() != 5) fail(not_storage);
  const auto& f = id->items;
  if (!f[0]->is(PyKind::kString) || f[0]->text != "storage" || !f[2]->is(PyKind::kString) ||
      !f[3]->is(PyKind::kString) || !f[4]->is(PyKind::kInt)) {
    fail(not_storage);
  }
  if (!f[1]->is(PyKind::kGlobal) || callables_.at(f[1]) != PickleCallable::kStorageType) {
    fail("has a persistent id without a storage type");
  }
  if (f[4]->integer < 0) fail(fmt::format("declares a storage of {} elements", f[4]->integer));
  PickledStorage s;
  s.key = f[2]->text;
  s.type = f[1]->text.substr(f[1]->text.find('.') + 1);
  s.element_size = storage_element_size(s.type);
  s.elements = static_cast<uint64_t>(f[4]->integer);
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(s.elements, static_cast<uint64_t>(s.element_size), &bytes)) {
    fail(fmt::format("declares a storage of {} elements", s.elements));
  }
  doc_.storages.push_back(std::move(s));
  PyValue* v = make(PyKind::kStorage);
  v->index = doc_.storages.size() - 1;
  push(v);
}

void PickleMachine::set_items(PyValue* target, const std::vector<PyValue*>& flat) {
  if (flat.size() % 2 != 0) fail("sets a key without a value");
  if (!target->is(PyKind::kDict) && !target->is(PyKind::kObject)) {
    fail("sets items on a " + target->describe());
  }
  for (size_t i = 0; i < flat.size(); i += 2) target->entries.emplace_back(flat[i], flat[i + 1]);
}

void PickleMachine::append_items(PyValue* target, const std::vector<PyValue*>& items) {
  if (target->is(PyKind::kList)) {
    target->items.insert(target->items.end(), items.begin(), items.end());
  } else if (target->is(PyKind::kObject)) {
    target->appended.insert(target->appended.end(), items.begin(), items.end());
  } else {
    fail("appends to a " + target->describe());
  }
}

PickleDocument PickleMachine::run() {
  while (!stopped_) {
    if (at_ >= size_) {
      op_pos_ = at_;
      fail("ends without a STOP opcode");
    }
    op_pos_ = at_;
    step(data_[at_++]);
  }
  if (stack_.size() != 1 || !marks_.empty()) {
    fail(fmt::format("stops with {} values and {} marks on its stack (one value expected)",
                     stack_.size(), marks_.size()));
  }
  doc_.root = stack_.back();
  return std::move(doc_);
}

const PyValue* PyValue::get(std::string_view key) const {
  const PyValue* dict = this;
  if (kind == PyKind::kObject) {
    if (state == nullptr || !state->is(PyKind::kDict)) return nullptr;
    dict = state;
  } else if (kind != PyKind::kDict) {
    return nullptr;
  }
  for (auto it = dict->entries.rbegin(); it != dict->entries.rend(); ++it) {
    if (it->first->is(PyKind::kString) && it->first->text == key) return it->second;
  }
  return nullptr;
}

std::string PyValue::describe() const {
  switch (kind) {
    case PyKind::kNone:
      return "None";
    case PyKind::kBool:
      return "bool";
    case PyKind::kInt:
      return "int";
    case PyKind::kFloat:
      return "float";
    case PyKind::kString:
      return "string";
    case PyKind::kBytes:
      return "bytes";
    case PyKind::kList:
      return "list";
    case PyKind::kTuple:
      return "tuple";
    case PyKind::kDict:
      return "dict";
    case PyKind::kSet:
      return "set";
    case PyKind::kGlobal:
      return printable(text);
    case PyKind::kObject:
      return printable(text) + " object";
    case PyKind::kStorage:
      return "storage";
    case PyKind::kTensor:
      return "tensor";
  }
  return "value";
}

PickleDocument read_pickle(const unsigned char* data, size_t size) {
  return PickleMachine(data, size).run();
}

}  // namespace trainer::model