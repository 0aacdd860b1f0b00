// See pickle_check.h. Opcodes: protocol 2..5 as Python's pickletools lists them, each with a
// fixed-size, length-prefixed, newline-ended or no argument. The replay follows LibTorch's
// unpickler (torch/csrc/jit/serialization/unpickler.cpp), not Python's: a MARK is an index into
// the stack, a GLOBAL registers a function and pushes its index (a storage type pushes its dtype
// instead), REDUCE and BUILD call the function whose index lies under their argument, NEWOBJ pops
// only the argument, and BINPERSID builds a tensor on the record its tuple names.
#include "model/pickle_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace trainer::model {
namespace {

using Bytes = const unsigned char*;

uint64_t little_endian(Bytes p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// Argument kinds of the pickle opcodes (pickletools' ArgumentDescriptor, reduced to sizes).
enum class Arg { kUnknown, kNone, kFixed, kLength, kLine, kTwoLines, kMemo };

struct Opcode {
  Arg arg = Arg::kUnknown;
  int bytes = 0;  // kFixed: the argument's size; kLength, kMemo: the size of the count
};

// Indexed by the opcode byte; kUnknown for bytes that are no opcode.
const std::array<Opcode, 256>& opcodes() {
  static const std::array<Opcode, 256> table = [] {
    std::array<Opcode, 256> t;
    t.fill(Opcode{Arg::kUnknown, 0});  // explicit: gcc 12 -O2 zero-filled `t{}` here, ignoring
                                       // the member initializer
    auto set = [&t](const char* ops, Opcode o) {
      for (const char* p = ops; *p != '\0'; ++p) t[static_cast<unsigned char>(*p)] = o;
    };
    set("().012NR]abd}elstuQo\x81\x85\x86\x87\x88\x89\x8f\x90\x91\x92\x93\x94\x97\x98",
        {Arg::kNone, 0});
    set("Kh\x80\x82", {Arg::kFixed, 1});
    set("M\x83", {Arg::kFixed, 2});
    set("Jj\x84", {Arg::kFixed, 4});
    set("G\x95", {Arg::kFixed, 8});
    set("UC\x8a\x8c", {Arg::kLength, 1});
    set("TXB\x8b", {Arg::kLength, 4});
    set("\x8d\x8e\x96", {Arg::kLength, 8});
    set("ILFSVPpg", {Arg::kLine, 0});
    set("ci", {Arg::kTwoLines, 0});
    set("q", {Arg::kMemo, 1});
    set("r", {Arg::kMemo, 4});
    return t;
  }();
  return table;
}

// The storage types LibTorch reads (`torch.<name>`) and the size of their elements.
struct StorageType {
  std::string_view name;
  int64_t element_size;
};
constexpr std::array<StorageType, 16> kStorageTypes{{{"FloatStorage", 4},
                                                     {"DoubleStorage", 8},
                                                     {"HalfStorage", 2},
                                                     {"BFloat16Storage", 2},
                                                     {"LongStorage", 8},
                                                     {"IntStorage", 4},
                                                     {"ShortStorage", 2},
                                                     {"CharStorage", 1},
                                                     {"ByteStorage", 1},
                                                     {"BoolStorage", 1},
                                                     {"ComplexHalfStorage", 4},
                                                     {"ComplexFloatStorage", 8},
                                                     {"ComplexDoubleStorage", 16},
                                                     {"QInt8Storage", 1},
                                                     {"QUInt8Storage", 1},
                                                     {"QInt32Storage", 4}}};

// What the unpickler runs when a pickle calls a registered function.
enum class Function : uint8_t { kOther, kRebuildTensor, kRebuildFromType };

enum class Kind : uint8_t { kOther, kInt, kString, kTuple, kStorageType, kFunction, kTensor };

// A value on the replayed stack, reduced to what tensors are built from. Copies are cheap (a tuple
// refers to its items), so the memo and DUP cost no more than the opcode that made the value.
struct Value {
  Kind kind = Kind::kOther;
  int64_t number = 0;  // kInt: the value; kFunction: its index; kStorageType, kTensor: element size
  uint64_t at = 0;     // kString: offset in the pickle; kTuple: first item; kTensor: storage bytes
  uint64_t length = 0;  // kString: bytes; kTuple: items
};

struct Refusal {
  std::string why;
};

class Replay {
 public:
  explicit Replay(Bytes data) : data_(data) {}

  // One opcode found at byte `pos`, its argument at [arg, arg + length) (GLOBAL's two lines
  // joined by their '\n').
  void step(unsigned char op, size_t pos, size_t arg, size_t length);

  // Every storage with elements the pickle read so far, once per record.
  std::vector<StorageRead> storages() const;

 private:
  [[noreturn]] void refuse(size_t pos, const std::string& what) const {
    throw Refusal{fmt::format("pickle {} at byte {}", what, pos)};
  }
  Value pop(size_t pos) {
    if (stack_.empty()) refuse(pos, "pops an empty stack");
    const Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  const Value& top(size_t pos) const {
    if (stack_.empty()) refuse(pos, "reads an empty stack");
    return stack_.back();
  }
  size_t pop_mark(size_t pos);
  Value tuple_from(size_t start);
  const Value& item(const Value& tuple, uint64_t i) const { return items_[tuple.at + i]; }
  std::string_view text(const Value& v) const {
    return {reinterpret_cast<const char*>(data_ + v.at), v.length};
  }
  void register_function(Function f);
  void global(size_t pos, std::string_view module, std::string_view name);
  void call(size_t pos);
  Value rebuild(size_t pos, const Value& args) const;
  void persistent_id(size_t pos);

  Bytes data_;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::vector<Value> items_;  // the items of every tuple, each tuple's in a row
  std::unordered_map<uint64_t, Value> memo_;
  std::vector<Function> functions_;  // the unpickler's globals_, in the order it registers them
  int skip_globals_ = 0;             // the unpickler's skip_next_read_global
  // Storage reads by key (offset and length of the key string): the most bytes one read needs and
  // how many reads there are (LibTorch copies the whole record for each one).
  std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>> reads_;
};

size_t Replay::pop_mark(size_t pos) {
  if (marks_.empty()) refuse(pos, "closes a MARK it never opened");
  const size_t start = marks_.back();
  marks_.pop_back();
  if (start > stack_.size()) refuse(pos, "popped values below its MARK");
  return start;
}

Value Replay::tuple_from(size_t start) {
  const Value tuple{Kind::kTuple, 0, items_.size(), stack_.size() - start};
  items_.insert(items_.end(), stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
  stack_.resize(start);
  return tuple;
}

void Replay::register_function(Function f) {
  functions_.push_back(f);
  stack_.push_back(Value{Kind::kFunction, static_cast<int64_t>(functions_.size() - 1)});
}

void Replay::global(size_t pos, std::string_view module, std::string_view name) {
  // A tensor subclass (torch._tensor._rebuild_from_type_v2) makes the unpickler read the next two
  // globals specially: the first registers as usual (torch.Tensor as a tensor rebuild), the
  // second only pushes the index of the latest function.
  if (skip_globals_ > 0) {
    --skip_globals_;
    if (skip_globals_ == 0) {
      stack_.push_back(Value{Kind::kFunction, static_cast<int64_t>(functions_.size() - 1)});
      return;
    }
    if (module == "torch" && name == "Tensor") {
      skip_globals_ = 0;
      register_function(Function::kRebuildTensor);
      return;
    }
  }
  if (module == "torch._utils" && (name == "_rebuild_tensor_v2" || name == "_rebuild_qtensor")) {
    register_function(Function::kRebuildTensor);
  } else if (module == "torch._tensor" && name == "_rebuild_from_type_v2") {
    register_function(Function::kRebuildFromType);
    skip_globals_ = 2;
  } else if (module == "torch._utils" && name == "_rebuild_sparse_tensor") {
    refuse(pos, "rebuilds a sparse tensor (not read: LibTorch does not check its indices)");
  } else if (module == "torch" && name != "device") {
    for (const StorageType& type : kStorageTypes) {
      if (name == type.name) {
        stack_.push_back(Value{Kind::kStorageType, type.element_size});
        return;
      }
    }
    const bool storage = name.size() > 7 && name.substr(name.size() - 7) == "Storage";
    refuse(pos,
           fmt::format("names an unknown {} torch.{}", storage ? "storage type" : "global", name));
  } else {
    register_function(Function::kOther);
  }
}

void Replay::call(size_t pos) {
  Value args = pop(pos);
  const Value callee = pop(pos);
  if (callee.kind == Kind::kInt || callee.kind == Kind::kStorageType) {
    // LibTorch would call the function this number indexes.
    refuse(pos, "calls a number");
  }
  if (callee.kind != Kind::kFunction) {
    stack_.push_back(Value{});  // LibTorch refuses the call
    return;
  }
  auto function = static_cast<size_t>(callee.number);
  // A subclass rebuild calls the function registered right after its own (unchecked by LibTorch)
  // on its third argument.
  while (functions_[function] == Function::kRebuildFromType) {
    if (args.kind != Kind::kTuple || args.length < 3 || item(args, 2).kind != Kind::kTuple) {
      refuse(pos, "rebuilds a tensor subclass from arguments it cannot check");
    }
    if (function + 1 >= functions_.size()) {
      refuse(pos, "rebuilds a tensor subclass without a rebuild function");
    }
    args = item(args, 2);
    ++function;
  }
  stack_.push_back(functions_[function] == Function::kRebuildTensor ? rebuild(pos, args) : Value{});
}

// torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, ...): LibTorch sets the
// view on the storage as given, so it must lie inside the storage.
Value Replay::rebuild(size_t pos, const Value& args) const {
  const auto unchecked = [&] { refuse(pos, "rebuilds a tensor from arguments it cannot check"); };
  if (args.kind != Kind::kTuple || args.length < 4) unchecked();
  const Value& storage = item(args, 0);
  const Value& offset = item(args, 1);
  const Value& sizes = item(args, 2);
  const Value& strides = item(args, 3);
  if (storage.kind != Kind::kTensor || offset.kind != Kind::kInt || sizes.kind != Kind::kTuple ||
      strides.kind != Kind::kTuple || sizes.length != strides.length) {
    unchecked();
  }
  if (offset.number < 0) refuse(pos, "rebuilds a tensor at a negative offset");
  // The last element the view reaches: offset + sum((size - 1) * stride), unless it is empty.
  uint64_t last = static_cast<uint64_t>(offset.number);
  bool empty = false;
  bool overflow = false;
  for (uint64_t i = 0; i < sizes.length; ++i) {
    const Value& size = item(sizes, i);
    const Value& stride = item(strides, i);
    if (size.kind != Kind::kInt || stride.kind != Kind::kInt) unchecked();
    if (size.number < 0 || stride.number < 0) {
      refuse(pos, "rebuilds a tensor with a negative size or stride");
    }
    uint64_t reach = 0;
    if (size.number == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(static_cast<uint64_t>(size.number - 1),
                                      static_cast<uint64_t>(stride.number), &reach) ||
               __builtin_add_overflow(last, reach, &last)) {
      overflow = true;
    }
  }
  const uint64_t elements = storage.at / static_cast<uint64_t>(storage.number);
  if (!empty && (overflow || last >= elements)) {
    refuse(pos,
           fmt::format("rebuilds a tensor that reaches past its storage of {} elements", elements));
  }
  return Value{Kind::kTensor, storage.number, storage.at};
}

// ('storage', torch.<type>Storage, key, location, numel): LibTorch reads the record
// `data/<key>` and gives it numel * element size bytes, whatever the record holds.
void Replay::persistent_id(size_t pos) {
  const Value id = pop(pos);
  const char* not_storage =
      "has a persistent id that is not ('storage', type, key, location, numel)";
  if (id.kind != Kind::kTuple || id.length != 5) refuse(pos, not_storage);
  const Value& tag = item(id, 0);
  const Value& type = item(id, 1);
  const Value& key = item(id, 2);
  const Value& location = item(id, 3);
  const Value& numel = item(id, 4);
  if (tag.kind != Kind::kString || text(tag) != "storage" || key.kind != Kind::kString ||
      location.kind != Kind::kString || numel.kind != Kind::kInt) {
    refuse(pos, not_storage);
  }
  if (type.kind != Kind::kStorageType) refuse(pos, "has a persistent id without a storage type");
  uint64_t bytes = 0;
  if (numel.number < 0 || __builtin_mul_overflow(static_cast<uint64_t>(numel.number),
                                                 static_cast<uint64_t>(type.number), &bytes)) {
    refuse(pos, fmt::format("declares a storage of {} elements", numel.number));
  }
  if (numel.number > 0) {
    auto& read = reads_[{key.at, key.length}];
    read.first = std::max(read.first, bytes);
    ++read.second;
  }
  stack_.push_back(Value{Kind::kTensor, type.number, bytes});
}

void Replay::step(unsigned char op, size_t pos, size_t arg, size_t length) {
  const auto number = [&](int64_t v) { stack_.push_back(Value{Kind::kInt, v}); };
  switch (op) {
    case '(':  // MARK
      marks_.push_back(stack_.size());
      break;
    case ')':  // EMPTY_TUPLE
      stack_.push_back(tuple_from(stack_.size()));
      break;
    case 't':  // TUPLE
      stack_.push_back(tuple_from(pop_mark(pos)));
      break;
    case 0x85:  // TUPLE1..3
    case 0x86:
    case 0x87: {
      const size_t n = op - 0x84u;
      if (stack_.size() < n) refuse(pos, "pops an empty stack");
      stack_.push_back(tuple_from(stack_.size() - n));
      break;
    }
    case '0':  // POP
      pop(pos);
      break;
    case '1':  // POP_MARK
      stack_.resize(pop_mark(pos));
      break;
    case '2': {  // DUP
      const Value v = top(pos);
      stack_.push_back(v);
      break;
    }
    case 'K':  // BININT1, BININT2
    case 'M':
      number(static_cast<int64_t>(little_endian(data_ + arg, length)));
      break;
    case 'J':  // BININT
      number(static_cast<int32_t>(static_cast<uint32_t>(little_endian(data_ + arg, 4))));
      break;
    case 0x8a:  // LONG1: little-endian two's complement
      if (length > 8) {
        stack_.push_back(Value{});
      } else {
        uint64_t v = little_endian(data_ + arg, length);
        if (length > 0 && length < 8 && (data_[arg + length - 1] & 0x80) != 0) {
          v |= ~uint64_t{0} << (8 * length);
        }
        number(static_cast<int64_t>(v));
      }
      break;
    case 'X':  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
    case 0x8c:
    case 0x8d:
      stack_.push_back(Value{Kind::kString, 0, arg, length});
      break;
    case 'c': {  // GLOBAL
      const std::string_view lines(reinterpret_cast<const char*>(data_ + arg), length);
      const size_t newline = lines.find('\n');
      global(pos, lines.substr(0, newline), lines.substr(newline + 1));
      break;
    }
    case 'q':  // BINPUT, LONG_BINPUT
    case 'r':
      memo_[little_endian(data_ + arg, length)] = top(pos);
      break;
    case 'h':  // BINGET, LONG_BINGET
    case 'j': {
      const uint64_t index = little_endian(data_ + arg, length);
      const auto it = memo_.find(index);
      if (it == memo_.end())
        refuse(pos, fmt::format("reads memo entry {} before writing it", index));
      stack_.push_back(it->second);
      break;
    }
    case 'R':  // REDUCE, BUILD
    case 'b':
      call(pos);
      break;
    case 0x81:  // NEWOBJ
      pop(pos);
      break;
    case 'Q':  // BINPERSID
      persistent_id(pos);
      break;
    case 'a':  // APPEND
      pop(pos);
      break;
    case 's':  // SETITEM
      pop(pos);
      pop(pos);
      break;
    case 'e':  // APPENDS, SETITEMS, ADDITEMS
    case 'u':
    case 0x90:
      stack_.resize(pop_mark(pos));
      break;
    case 'l':  // LIST, DICT, FROZENSET, INST, OBJ
    case 'd':
    case 0x91:
    case 'i':
    case 'o':
      stack_.resize(pop_mark(pos));
      stack_.push_back(Value{});
      break;
    case 0x93:  // STACK_GLOBAL
      pop(pos);
      pop(pos);
      stack_.push_back(Value{});
      break;
    case 0x92:  // NEWOBJ_EX
      pop(pos);
      pop(pos);
      pop(pos);
      stack_.push_back(Value{});
      break;
    case 'p':  // PUT, MEMOIZE (LibTorch reads neither)
    case 0x94:
      top(pos);
      break;
    case 0x80:  // PROTO, FRAME, READONLY_BUFFER
    case 0x95:
    case 0x98:
      break;
    default:  // the others push one value that builds no tensor: text ints, floats, bytes, None,
              // bools, empty list/dict/set, GET, PERSID, EXT1..4, NEXT_BUFFER
      stack_.push_back(Value{});
      break;
  }
}

std::vector<StorageRead> Replay::storages() const {
  std::vector<StorageRead> out;
  for (const auto& [key, read] : reads_) {
    out.push_back(
        StorageRead{std::string(reinterpret_cast<const char*>(data_ + key.first), key.second),
                    read.first, read.second});
  }
  return out;
}

}  // namespace

std::optional<std::string> check_pickle(const unsigned char* data, size_t size,
                                        std::vector<StorageRead>* storages) {
  Replay replay(data);
  size_t at = 0;
  try {
    while (at < size) {
      const size_t pos = at;
      const unsigned char op = data[at++];
      const Opcode o = opcodes()[op];
      const size_t left = size - at;
      size_t arg = at;
      size_t length = 0;
      switch (o.arg) {
        case Arg::kUnknown:
          return fmt::format("unknown pickle opcode 0x{:02x} at byte {}", op, pos);
        case Arg::kNone:
          if (op == '.') {
            if (storages != nullptr) *storages = replay.storages();
            return std::nullopt;
          }
          break;
        case Arg::kFixed:
          if (left < static_cast<size_t>(o.bytes)) {
            return std::string("pickle ends inside an opcode");
          }
          length = static_cast<size_t>(o.bytes);
          at += length;
          break;
        case Arg::kLength: {
          if (left < static_cast<size_t>(o.bytes)) {
            return std::string("pickle ends inside a length");
          }
          const uint64_t declared = little_endian(data + at, static_cast<size_t>(o.bytes));
          if (declared > left - o.bytes) {
            return fmt::format("pickle declares {} bytes at byte {} but has {} left", declared, pos,
                               left - o.bytes);
          }
          arg = at + o.bytes;
          length = static_cast<size_t>(declared);
          at = arg + length;
          break;
        }
        case Arg::kLine:
        case Arg::kTwoLines:
          for (int line = 0; line < (o.arg == Arg::kLine ? 1 : 2); ++line) {
            const void* end = std::memchr(data + at, '\n', size - at);
            if (end == nullptr) return std::string("pickle ends inside a text argument");
            length = static_cast<size_t>(static_cast<Bytes>(end) - (data + arg));
            at = arg + length + 1;
          }
          break;
        case Arg::kMemo:
          if (left < static_cast<size_t>(o.bytes)) {
            return std::string("pickle ends inside an opcode");
          }
          // Each memo entry stores an object the pickle built, so an index beyond its size is
          // corrupt (LibTorch reserves memory for the index before storing anything).
          if (little_endian(data + at, static_cast<size_t>(o.bytes)) > size) {
            return fmt::format("pickle memo index at byte {} is out of range", pos);
          }
          length = static_cast<size_t>(o.bytes);
          at += length;
          break;
      }
      replay.step(op, pos, arg, length);
    }
  } catch (const Refusal& r) {
    return r.why;
  }
  return std::string("pickle has no STOP opcode");
}

}  // namespace trainer::model
