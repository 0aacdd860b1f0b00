// See restricted_unpickler.h. The opcodes are those of protocols 0..5 as Python's pickletools
// lists them; the ones that only a hostile or a foreign file would use (PERSID text ids, EXT
// registries, INST/OBJ, out-of-band buffers, unicode escapes) are refused.
#include "model/restricted_unpickler.h"

#include "model/pickle_allow_list.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace trainer::model {
namespace {

uint64_t little_endian(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// A name from the file as a message may show it: control bytes replaced, at most 80 characters.
std::string printable(std::string_view text) {
  std::string out(text.substr(0, 80));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text.size() > out.size() ? out + "..." : out;
}

class Machine {
 public:
  Machine(const unsigned char* data, size_t size) : data_(data), size_(size) {}
  PickleDocument run();

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw PickleError(fmt::format("pickle {} at byte {}", what, op_pos_));
  }
  PyValue* make(PyKind kind) {
    if (doc_.values.size() >= kMaxPickleValues) {
      fail(fmt::format("builds more than {} values (no model checkpoint needs that many)",
                       kMaxPickleValues));
    }
    PyValue& v = doc_.values.emplace_back();
    v.kind = kind;
    return &v;
  }
  void push(PyValue* v) { stack_.push_back(v); }
  PyValue* pop() {
    if (stack_.size() <= floor()) fail("pops an empty stack");
    PyValue* v = stack_.back();
    stack_.pop_back();
    return v;
  }
  PyValue* top() const {
    if (stack_.size() <= floor()) fail("reads an empty stack");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The values above the latest MARK, which is removed.
  std::vector<PyValue*> pop_to_mark() {
    if (marks_.empty()) fail("closes a MARK it never opened");
    const size_t start = marks_.back();
    marks_.pop_back();
    std::vector<PyValue*> out(stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
    stack_.resize(start);
    return out;
  }
  // Opcode arguments.
  const unsigned char* take(size_t n) {
    if (size_ - at_ < n) fail("ends inside an opcode");
    const unsigned char* p = data_ + at_;
    at_ += n;
    return p;
  }
  std::string_view take_counted(size_t count_bytes) {
    const uint64_t n = little_endian(take(count_bytes), count_bytes);
    if (n > size_ - at_) {
      throw PickleError(fmt::format("pickle declares {} bytes at byte {} but has {} left", n,
                                    op_pos_, size_ - at_));
    }
    return {reinterpret_cast<const char*>(take(static_cast<size_t>(n))), static_cast<size_t>(n)};
  }
  std::string_view take_line() {
    const void* end = std::memchr(data_ + at_, '\n', size_ - at_);
    if (end == nullptr) fail("ends inside a text argument");
    const auto n = static_cast<size_t>(static_cast<const unsigned char*>(end) - (data_ + at_));
    std::string_view line(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n + 1;
    return line;
  }

  PyValue* integer(int64_t v) {
    PyValue* p = make(PyKind::kInt);
    p->integer = v;
    return p;
  }
  PyValue* text(PyKind kind, std::string_view s) {
    PyValue* p = make(kind);
    p->text = std::string(s);
    return p;
  }
  PyValue* sequence(PyKind kind, std::vector<PyValue*> items) {
    PyValue* p = make(kind);
    p->items = std::move(items);
    return p;
  }
  int64_t text_integer(std::string_view line);
  int64_t long_integer(std::string_view bytes);
  void global(std::string_view module, std::string_view name);
  void reduce();
  PyValue* call(const PyValue& callee, const PyValue& args);
  PyValue* rebuild_tensor(const PyValue& args);
  void persistent_id();
  void set_items(PyValue* target, const std::vector<PyValue*>& flat);
  void append_items(PyValue* target, const std::vector<PyValue*>& items);
  void memo_put(uint64_t index) { memo_[index] = top(); }
  void memo_get(uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) fail(fmt::format("reads memo entry {} before writing it", index));
    push(it->second);
  }
  void step(unsigned char op);

  const unsigned char* data_;
  size_t size_;
  size_t at_ = 0;
  size_t op_pos_ = 0;
  bool stopped_ = false;
  PickleDocument doc_;
  std::vector<PyValue*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PyValue*> memo_;
  std::unordered_map<const PyValue*, PickleCallable> callables_;  // the kGlobal values made so far
};

int64_t Machine::text_integer(std::string_view line) {
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

int64_t Machine::long_integer(std::string_view bytes) {
  if (bytes.size() > 8) fail("has an integer wider than 64 bits");
  const auto p = reinterpret_cast<const unsigned char*>(bytes.data());
  uint64_t v = little_endian(p, bytes.size());
  if (!bytes.empty() && bytes.size() < 8 && (p[bytes.size() - 1] & 0x80) != 0) {
    v |= ~uint64_t{0} << (8 * bytes.size());
  }
  return static_cast<int64_t>(v);
}

void Machine::global(std::string_view module, std::string_view name) {
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

PyValue* Machine::rebuild_tensor(const PyValue& args) {
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

PyValue* Machine::call(const PyValue& callee, const PyValue& args) {
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

void Machine::reduce() {
  PyValue* args = pop();
  PyValue* callee = pop();
  push(call(*callee, *args));
}

// ('storage', torch.<Type>Storage, key, location, numel)
void Machine::persistent_id() {
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

void Machine::set_items(PyValue* target, const std::vector<PyValue*>& flat) {
  if (flat.size() % 2 != 0) fail("sets a key without a value");
  if (!target->is(PyKind::kDict) && !target->is(PyKind::kObject)) {
    fail("sets items on a " + target->describe());
  }
  for (size_t i = 0; i < flat.size(); i += 2) target->entries.emplace_back(flat[i], flat[i + 1]);
}

void Machine::append_items(PyValue* target, const std::vector<PyValue*>& items) {
  if (target->is(PyKind::kList)) {
    target->items.insert(target->items.end(), items.begin(), items.end());
  } else if (target->is(PyKind::kObject)) {
    target->appended.insert(target->appended.end(), items.begin(), items.end());
  } else {
    fail("appends to a " + target->describe());
  }
}

void Machine::step(unsigned char op) {
  switch (op) {
    case 0x80:  // PROTO
      take(1);
      break;
    case 0x95:  // FRAME
      take(8);
      break;
    case '.':  // STOP
      stopped_ = true;
      break;
    case '(':  // MARK
      marks_.push_back(stack_.size());
      break;
    case '0':  // POP
      pop();
      break;
    case '1':  // POP_MARK
      pop_to_mark();
      break;
    case '2':  // DUP
      push(top());
      break;
    case 'N':
      push(make(PyKind::kNone));
      break;
    case 0x88:  // NEWTRUE, NEWFALSE
    case 0x89: {
      PyValue* b = make(PyKind::kBool);
      b->flag = op == 0x88;
      push(b);
      break;
    }
    case 'I': {  // INT (protocol 0; "01"/"00" are True/False)
      const std::string_view line = take_line();
      if (line == "01" || line == "00") {
        PyValue* b = make(PyKind::kBool);
        b->flag = line == "01";
        push(b);
      } else {
        push(integer(text_integer(line)));
      }
      break;
    }
    case 'L':  // LONG (protocol 0)
      push(integer(text_integer(take_line())));
      break;
    case 'J':
      push(integer(static_cast<int32_t>(static_cast<uint32_t>(little_endian(take(4), 4)))));
      break;
    case 'K':
      push(integer(static_cast<int64_t>(little_endian(take(1), 1))));
      break;
    case 'M':
      push(integer(static_cast<int64_t>(little_endian(take(2), 2))));
      break;
    case 0x8a:  // LONG1, LONG4
      push(integer(long_integer(take_counted(1))));
      break;
    case 0x8b:
      push(integer(long_integer(take_counted(4))));
      break;
    case 'G': {  // BINFLOAT: big-endian double
      const unsigned char* p = take(8);
      uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];
      PyValue* f = make(PyKind::kFloat);
      std::memcpy(&f->real, &bits, sizeof bits);
      push(f);
      break;
    }
    case 'F': {  // FLOAT (protocol 0)
      const std::string s(take_line());
      char* end = nullptr;
      PyValue* f = make(PyKind::kFloat);
      f->real = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) fail("has a float it cannot read");
      push(f);
      break;
    }
    case 'X':  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
      push(text(PyKind::kString, take_counted(4)));
      break;
    case 0x8c:
      push(text(PyKind::kString, take_counted(1)));
      break;
    case 0x8d:
      push(text(PyKind::kString, take_counted(8)));
      break;
    case 'T':  // BINSTRING, SHORT_BINSTRING (Python 2 str): read as text
      push(text(PyKind::kString, take_counted(4)));
      break;
    case 'U':
      push(text(PyKind::kString, take_counted(1)));
      break;
    case 'B':  // BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8
      push(text(PyKind::kBytes, take_counted(4)));
      break;
    case 'C':
      push(text(PyKind::kBytes, take_counted(1)));
      break;
    case 0x8e:
    case 0x96:
      push(text(PyKind::kBytes, take_counted(8)));
      break;
    case ')':  // EMPTY_TUPLE, TUPLE, TUPLE1..3
      push(sequence(PyKind::kTuple, {}));
      break;
    case 't':
      push(sequence(PyKind::kTuple, pop_to_mark()));
      break;
    case 0x85:
    case 0x86:
    case 0x87: {
      const size_t n = op - 0x84u;
      if (stack_.size() < floor() + n) fail("pops an empty stack");
      std::vector<PyValue*> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
      stack_.resize(stack_.size() - n);
      push(sequence(PyKind::kTuple, std::move(items)));
      break;
    }
    case ']':  // EMPTY_LIST, LIST, APPEND, APPENDS
      push(sequence(PyKind::kList, {}));
      break;
    case 'l':
      push(sequence(PyKind::kList, pop_to_mark()));
      break;
    case 'a': {
      PyValue* item = pop();
      append_items(top(), {item});
      break;
    }
    case 'e': {
      const std::vector<PyValue*> items = pop_to_mark();
      append_items(top(), items);
      break;
    }
    case '}':  // EMPTY_DICT, DICT, SETITEM, SETITEMS
      push(make(PyKind::kDict));
      break;
    case 'd': {
      const std::vector<PyValue*> flat = pop_to_mark();
      PyValue* d = make(PyKind::kDict);
      set_items(d, flat);
      push(d);
      break;
    }
    case 's': {
      PyValue* value = pop();
      PyValue* key = pop();
      set_items(top(), {key, value});
      break;
    }
    case 'u': {
      const std::vector<PyValue*> flat = pop_to_mark();
      set_items(top(), flat);
      break;
    }
    case 0x8f:  // EMPTY_SET, ADDITEMS, FROZENSET
      push(sequence(PyKind::kSet, {}));
      break;
    case 0x90: {
      const std::vector<PyValue*> items = pop_to_mark();
      PyValue* set = top();
      if (!set->is(PyKind::kSet)) fail("adds items to a " + set->describe());
      set->items.insert(set->items.end(), items.begin(), items.end());
      break;
    }
    case 0x91:
      push(sequence(PyKind::kSet, pop_to_mark()));
      break;
    case 'c': {  // GLOBAL, STACK_GLOBAL
      const std::string_view module = take_line();
      const std::string_view name = take_line();
      global(module, name);
      break;
    }
    case 0x93: {
      const PyValue* name = pop();
      const PyValue* module = pop();
      if (!module->is(PyKind::kString) || !name->is(PyKind::kString)) {
        fail("has a STACK_GLOBAL whose names are not strings");
      }
      global(module->text, name->text);
      break;
    }
    case 'R':  // REDUCE
      reduce();
      break;
    case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
      PyValue* args = pop();
      PyValue* cls = pop();
      if (!cls->is(PyKind::kGlobal))
        fail("creates an object of " + cls->describe() + ", which is not a class");
      push(call(*cls, *args));
      break;
    }
    case 0x92: {  // NEWOBJ_EX: cls.__new__(cls, *args, **kwargs)
      PyValue* kwargs = pop();
      PyValue* args = pop();
      PyValue* cls = pop();
      if (!cls->is(PyKind::kGlobal))
        fail("creates an object of " + cls->describe() + ", which is not a class");
      if (!kwargs->is(PyKind::kDict) || !kwargs->entries.empty()) {
        fail("creates an object with keyword arguments");
      }
      push(call(*cls, *args));
      break;
    }
    case 'b': {  // BUILD: the state of the object below
      PyValue* state = pop();
      PyValue* target = top();
      if (target->state != nullptr && target->state->is(PyKind::kDict) &&
          state->is(PyKind::kDict)) {
        target->state->entries.insert(target->state->entries.end(), state->entries.begin(),
                                      state->entries.end());
      } else {
        target->state = state;
      }
      break;
    }
    case 'Q':  // BINPERSID
      persistent_id();
      break;
    case 'q':  // BINPUT, LONG_BINPUT, PUT, MEMOIZE
      memo_put(little_endian(take(1), 1));
      break;
    case 'r':
      memo_put(little_endian(take(4), 4));
      break;
    case 'p':
      memo_put(static_cast<uint64_t>(text_integer(take_line())));
      break;
    case 0x94:
      memo_put(memo_.size());
      break;
    case 'h':  // BINGET, LONG_BINGET, GET
      memo_get(little_endian(take(1), 1));
      break;
    case 'j':
      memo_get(little_endian(take(4), 4));
      break;
    case 'g':
      memo_get(static_cast<uint64_t>(text_integer(take_line())));
      break;
    case 'P':
      fail("has a text persistent id (torch.save writes BINPERSID)");
    case 'S':
    case 'V':
      fail("has protocol 0 text strings (torch.save writes protocol 2)");
    case 'i':
    case 'o':
      fail("creates an object with INST/OBJ (torch.save writes protocol 2)");
    case 0x82:
    case 0x83:
    case 0x84:
      fail("refers to the extension registry");
    case 0x97:
    case 0x98:
      fail("uses out-of-band buffers");
    default:
      fail(fmt::format("has the unknown opcode 0x{:02x}", op));
  }
}

PickleDocument Machine::run() {
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

}  // namespace

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
  return Machine(data, size).run();
}

}  // namespace trainer::model
