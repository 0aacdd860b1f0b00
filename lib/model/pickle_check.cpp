// See pickle_check.h. Opcodes: protocol 2..5 as Python's pickletools lists them, each with a
// fixed-size, length-prefixed, newline-ended or no argument.
#include "model/pickle_check.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace trainer::model {
namespace {

using Bytes = const unsigned char*;

uint64_t little_endian(Bytes p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
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

}  // namespace

std::optional<std::string> check_pickle(const unsigned char* data, size_t size) {
  size_t at = 0;
  while (at < size) {
    const unsigned char op = data[at++];
    const Opcode o = opcodes()[op];
    const size_t left = size - at;
    switch (o.arg) {
      case Arg::kUnknown:
        return fmt::format("unknown pickle opcode 0x{:02x} at byte {}", op, at - 1);
      case Arg::kNone:
        if (op == '.') return std::nullopt;
        break;
      case Arg::kFixed:
        if (left < static_cast<size_t>(o.bytes)) return std::string("pickle ends inside an opcode");
        at += o.bytes;
        break;
      case Arg::kLength: {
        if (left < static_cast<size_t>(o.bytes)) return std::string("pickle ends inside a length");
        const uint64_t length = little_endian(data + at, o.bytes);
        if (length > left - o.bytes) {
          return fmt::format("pickle declares {} bytes at byte {} but has {} left", length, at - 1,
                             left - o.bytes);
        }
        at += o.bytes + length;
        break;
      }
      case Arg::kLine:
      case Arg::kTwoLines:
        for (int line = 0; line < (o.arg == Arg::kLine ? 1 : 2); ++line) {
          const void* end = std::memchr(data + at, '\n', size - at);
          if (end == nullptr) return std::string("pickle ends inside a text argument");
          at = static_cast<size_t>(static_cast<Bytes>(end) - data) + 1;
        }
        break;
      case Arg::kMemo:
        if (left < static_cast<size_t>(o.bytes)) return std::string("pickle ends inside an opcode");
        // Each memo entry stores an object the pickle built, so an index beyond its size is
        // corrupt (LibTorch reserves memory for the index before storing anything).
        if (little_endian(data + at, o.bytes) > size) {
          return fmt::format("pickle memo index at byte {} is out of range", at - 1);
        }
        at += o.bytes;
        break;
    }
  }
  return std::string("pickle has no STOP opcode");
}

}  // namespace trainer::model
