// Tested by tests/model/test_restricted_unpickler.cpp: opcode execution: plain values, containers,
//   memo, argument bounds, STOP, refused opcodes, value cap.
// The opcode table of the restricted unpickler (model/pickle_machine.h): protocols 0..5 as Python's
// pickletools lists them, each executed into plain values; the ones only a hostile or foreign file
// would use are refused with what they are.
#include <fmt/format.h>

#include <cstdint>

#include "model/pickle_machine.h"

namespace trainer::model {

void PickleMachine::step(unsigned char op) {
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

}  // namespace trainer::model
