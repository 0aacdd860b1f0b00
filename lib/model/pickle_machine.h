// lib/model internal: the machine restricted_unpickler.h's read_pickle runs (only that reader's two
// sources include this): its stack, marks and memo, the bounded argument readers, and the value
// builders. pickle_opcodes.cpp holds the opcode table (PickleMachine::step);
// restricted_unpickler.cpp the calls of allowed classes, tensors and storages, and the document.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/pickle_allow_list.h"
#include "model/restricted_unpickler.h"

namespace trainer::model {

// A name from the file as a message may show it: control bytes replaced, at most 80 characters.
std::string printable(std::string_view text);

class PickleMachine {
 public:
  PickleMachine(const unsigned char* data, size_t size) : data_(data), size_(size) {}
  PickleDocument run();

 private:
  static uint64_t little_endian(const unsigned char* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
  }
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

}  // namespace trainer::model
