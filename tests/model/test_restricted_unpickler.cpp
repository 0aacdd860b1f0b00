// The restricted unpickler (model/restricted_unpickler.h): what it builds from each opcode, what
// its allow-list refuses (before anything is built), and its bounds, against hand-computed byte
// positions.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/restricted_unpickler.h"

using namespace trainer::model;

namespace {

std::string little_endian(uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  return out;
}

// BININT1 for 0..255, else BININT; BINUNICODE; a tuple of ints.
std::string pickle_int(int64_t v) {
  return v >= 0 && v < 256 ? "K" + little_endian(static_cast<uint64_t>(v), 1)
                           : "J" + little_endian(static_cast<uint64_t>(v), 4);
}
std::string pickle_string(const std::string& s) {
  return "X" + little_endian(s.size(), 4) + s;
}
std::string pickle_int_tuple(const std::vector<int64_t>& values) {
  std::string out = "(";
  for (const int64_t v : values) out += pickle_int(v);
  return out + "t";
}

const std::string kProto2("\x80\x02", 2);

PickleDocument read(const std::string& pickle) {
  return read_pickle(reinterpret_cast<const unsigned char*>(pickle.data()), pickle.size());
}

// The refusal's message, or "" when the pickle reads.
std::string refusal(const std::string& pickle) {
  try {
    read(pickle);
  } catch (const PickleError& e) {
    return e.what();
  }
  return "";
}

// BINPERSID of ('storage', torch.<type>, key, 'cpu', numel) given the numel's opcode.
std::string storage(const std::string& key, const std::string& numel,
                    const std::string& type = "FloatStorage") {
  return "(" + pickle_string("storage") + "ctorch\n" + type + "\n" + pickle_string(key) +
         pickle_string("cpu") + numel + "tQ";
}

// _rebuild_tensor_v2(storage, offset, sizes, strides, False, OrderedDict())
std::string tensor(const std::string& key, int64_t numel, int64_t offset,
                   const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  return "ctorch._utils\n_rebuild_tensor_v2\n(" + storage(key, pickle_int(numel)) +
         pickle_int(offset) + pickle_int_tuple(sizes) + pickle_int_tuple(strides) + "\x89" +
         "ccollections\nOrderedDict\n)Rt" + "R";
}

}  // namespace

TEST_CASE("unpickler: plain values, containers and the memo") {
  // {'a': [1, -2, 300, 2**40], 'b': ('x', None, True, False, 0.5), 'c': <memo 1 again>}
  const std::string pickle =
      kProto2 + "}q" + std::string(1, '\0') + "(" + pickle_string("a") + "](K\x01J" +
      std::string("\xfe\xff\xff\xff", 4) + "M\x2c\x01" + std::string("\x8a\x06\0\0\0\0\0\x01", 8) +
      "eq\x01" + pickle_string("b") + "(" + pickle_string("x") + "N\x88\x89G" +
      std::string("\x3f\xe0\0\0\0\0\0\0", 8) + "t" + pickle_string("c") + "h\x01u.";
  const PickleDocument doc = read(pickle);
  const PyValue& root = *doc.root;
  REQUIRE(root.is(PyKind::kDict));
  REQUIRE(root.entries.size() == 3);
  const PyValue* a = root.get("a");
  REQUIRE(a != nullptr);
  REQUIRE(a->is(PyKind::kList));
  REQUIRE(a->items.size() == 4);
  CHECK(a->items[0]->integer == 1);
  CHECK(a->items[1]->integer == -2);
  CHECK(a->items[2]->integer == 300);
  CHECK(a->items[3]->integer == (int64_t{1} << 40));
  const PyValue* b = root.get("b");
  REQUIRE(b->is(PyKind::kTuple));
  CHECK(b->items[0]->text == "x");
  CHECK(b->items[1]->is(PyKind::kNone));
  CHECK(b->items[2]->flag);
  CHECK_FALSE(b->items[3]->flag);
  CHECK(b->items[4]->real == 0.5);
  CHECK(root.get("c") == a);  // the memo refers to the same list
  CHECK(root.get("d") == nullptr);
}

TEST_CASE("unpickler: each opcode's argument must fit, and the pickle must end in STOP") {
  CHECK(refusal(std::string("\x80\x02K\x05.", 5)).empty());
  CHECK(refusal(std::string("\x80\x02X\x04\0\0\0ab.", 10)) ==
        "pickle declares 4 bytes at byte 2 but has 3 left");
  CHECK(refusal(std::string("\x80\x02K\x05", 4)) == "pickle ends without a STOP opcode at byte 4");
  CHECK(refusal(std::string("\x80\x02K", 3)) == "pickle ends inside an opcode at byte 2");
  CHECK(refusal(kProto2 + "ctorch\n") == "pickle ends inside a text argument at byte 2");
  CHECK(refusal(std::string("\x80\x02\xff.", 4)) == "pickle has the unknown opcode 0xff at byte 2");
  CHECK(refusal(kProto2 + "t.") == "pickle closes a MARK it never opened at byte 2");
  CHECK(refusal(kProto2 + "h\x05.") == "pickle reads memo entry 5 before writing it at byte 2");
  CHECK(refusal(kProto2 + "0.") == "pickle pops an empty stack at byte 2");
  CHECK(refusal(kProto2 + "NN.") ==
        "pickle stops with 2 values and 0 marks on its stack (one "
        "value expected) at byte 4");
  // Values below a MARK are out of reach until it closes (as in Python's unpickler).
  CHECK(refusal(kProto2 + "N(0.") == "pickle pops an empty stack at byte 4");
  CHECK(refusal(kProto2 + std::string("\x8a\x09", 2) + std::string(9, '\x01') + ".") ==
        "pickle has an integer wider than 64 bits at byte 2");
}

TEST_CASE("unpickler: a 2 GB declared string is refused without allocating it") {
  // BINUNICODE with length 0x7ffffff0: the count is checked against the bytes left first.
  const std::string pickle = kProto2 + "X" + std::string("\xf0\xff\xff\x7f", 4) + "ab.";
  CHECK(refusal(pickle) == "pickle declares 2147483632 bytes at byte 2 but has 3 left");
  const std::string eight = kProto2 + "\x8d" + std::string("\0\0\0\0\0\0\0\x80", 8) + ".";
  CHECK(refusal(eight) == "pickle declares 9223372036854775808 bytes at byte 2 but has 1 left");
}

TEST_CASE("unpickler: any global off the allow-list is refused where it is named") {
  // The GLOBAL at byte 2 is refused before its REDUCE could run it.
  for (const char* name :
       {"os\nsystem", "posix\nsystem", "nt\nsystem", "subprocess\nPopen", "subprocess\ncall",
        "builtins\neval", "builtins\nexec", "builtins\ngetattr", "builtins\n__import__",
        "__builtin__\neval", "__builtin__\ngetattr", "builtins\nopen", "copyreg\n_reconstructor",
        "torch\nload", "torch._utils\n_rebuild_sparse_tensor", "torch.storage\n_load_from_bytes",
        "numpy.core.multiarray\n_reconstruct", "ultralytics_evil\nx", "torch.nnx\nx"}) {
    CAPTURE(name);
    std::string dotted = name;
    dotted[dotted.find('\n')] = '.';
    CHECK(refusal(kProto2 + "c" + name + "\n(" + pickle_string("echo hi") + "tR.") ==
          "pickle names " + dotted + ", which is not on the allow-list at byte 2");
  }
  // STACK_GLOBAL (protocol 4) spells the same names with two strings: refused at the opcode.
  const std::string stacked = kProto2 + pickle_string("os") + pickle_string("system") + "\x93" +
                              "(" + pickle_string("echo hi") + "tR.";
  CHECK(refusal(stacked) == "pickle names os.system, which is not on the allow-list at byte 20");
  // A call of something that is no global (here an int) is refused too.
  CHECK(refusal(kProto2 + "K\x01)R.") ==
        "pickle calls int, which is not a named callable at byte 5");
  CHECK(refusal(kProto2 + "K\x01)\x81.") ==
        "pickle creates an object of int, which is not a class at byte 5");
}

TEST_CASE("unpickler: allowed classes become inert records, builtins become containers") {
  // NEWOBJ of ultralytics.nn.tasks.DetectionModel, then BUILD with {'nc': 3}
  const std::string module =
      kProto2 + "cultralytics.nn.tasks\nDetectionModel\n)\x81}(" + pickle_string("nc") + "K\x03ub.";
  const PickleDocument doc = read(module);
  REQUIRE(doc.root->is(PyKind::kObject));
  CHECK(doc.root->text == "ultralytics.nn.tasks.DetectionModel");
  CHECK(doc.root->describe() == "ultralytics.nn.tasks.DetectionModel object");
  REQUIRE(doc.root->get("nc") != nullptr);
  CHECK(doc.root->get("nc")->integer == 3);
  // torch.nn.*, pathlib.*, types.* and collections.* classes: records with their arguments.
  const PickleDocument path =
      read(kProto2 + "cpathlib\nPosixPath\n(" + pickle_string("runs") + pickle_string("a") + "tR.");
  CHECK(path.root->text == "pathlib.PosixPath");
  REQUIRE(path.root->items.size() == 2);
  CHECK(path.root->items[1]->text == "a");
  CHECK(read(kProto2 + "ctorch.nn.modules.conv\nConv2d\n)\x81.").root->is(PyKind::kObject));
  CHECK(read(kProto2 + "ctypes\nSimpleNamespace\n)R.").root->is(PyKind::kObject));
  // OrderedDict -> dict, set/frozenset (Python 2 spelling too) -> set, torch.Size -> tuple.
  const PickleDocument od_doc =
      read(kProto2 + "ccollections\nOrderedDict\n)R(" + pickle_string("k") + "K\x07u.");
  const PyValue& od = *od_doc.root;
  REQUIRE(od.is(PyKind::kDict));
  CHECK(od.get("k")->integer == 7);
  const PickleDocument set_doc = read(kProto2 + "c__builtin__\nset\n](K\x01K\x02" + "e\x85R.");
  const PyValue& set = *set_doc.root;
  REQUIRE(set.is(PyKind::kSet));
  CHECK(set.items.size() == 2);
  CHECK(read(kProto2 + "ctorch\nSize\n(K\x02K\x03t\x85R.").root->items.size() == 2);
  // Protocol 2's bytes: _codecs.encode('\xe9a', 'latin1') -> b'\xe9a'.
  const PickleDocument bytes_doc = read(kProto2 + "c_codecs\nencode\n" +
                                        pickle_string("\xc3\xa9"
                                                      "a") +
                                        pickle_string("latin1") + "\x86R.");
  const PyValue& bytes = *bytes_doc.root;
  REQUIRE(bytes.is(PyKind::kBytes));
  CHECK(bytes.text ==
        "\xe9"
        "a");
}

TEST_CASE("unpickler: persistent ids are storages, rebuilt views must lie inside them") {
  const PickleDocument doc = read(kProto2 + tensor("0", 4, 1, {3}, {1}) + ".");
  REQUIRE(doc.root->is(PyKind::kTensor));
  REQUIRE(doc.storages.size() == 1);
  CHECK(doc.storages[0].key == "0");
  CHECK(doc.storages[0].type == "FloatStorage");
  CHECK(doc.storages[0].element_size == 4);
  CHECK(doc.storages[0].elements == 4);
  const PickledTensor& t = doc.tensors.at(doc.root->index);
  CHECK(t.offset == 1);
  CHECK(t.sizes == std::vector<int64_t>{3});
  CHECK(t.strides == std::vector<int64_t>{1});
  // 1 + (4 - 1) * 1 = 4 is past elements 0..3; the rebuild's REDUCE is the last opcode before STOP.
  const std::string past = kProto2 + tensor("0", 4, 1, {4}, {1}) + ".";
  CHECK(refusal(past) ==
        "pickle rebuilds a tensor that reaches past its storage of 4 elements at "
        "byte " +
            std::to_string(past.size() - 2));
  const std::string empty = kProto2 + tensor("0", 4, 100, {0}, {1}) + ".";  // reads nothing
  CHECK(refusal(empty).empty());
  // ('storage', 1): bytes 2 MARK, 3..14 'storage', 15..16 BININT1, 17 TUPLE, 18 BINPERSID.
  CHECK(refusal(kProto2 + "(" + pickle_string("storage") + "K\x01tQ.") ==
        "pickle has a persistent id that is not ('storage', type, key, location, numel) at byte "
        "18");
  // GLOBAL torch FloatStorage takes 15..34, '0' 35..40, 'cpu' 41..48, the numel 49..53, TUPLE 54.
  CHECK(refusal(kProto2 + storage("0", std::string("J\xff\xff\xff\xff", 5)) + ".") ==
        "pickle declares a storage of -1 elements at byte 55");
  CHECK(refusal(kProto2 + "(" + pickle_string("storage") + "K\x05" + pickle_string("0") +
                pickle_string("cpu") + "K\x04tQ.") ==
        "pickle has a persistent id without a storage type at byte 34");
  // A tensor subclass: _rebuild_from_type_v2(_rebuild_tensor_v2, torch.Tensor, args, state).
  const std::string sub = kProto2 + "ctorch._tensor\n_rebuild_from_type_v2\n(" +
                          "ctorch._utils\n_rebuild_tensor_v2\nctorch\nTensor\n(" +
                          storage("0", "K\x04") + pickle_int(0) + pickle_int_tuple({4}) +
                          pickle_int_tuple({1}) + "\x89}t}tR.";
  CHECK(read(sub).root->is(PyKind::kTensor));
}

TEST_CASE("unpickler: deep nesting and shared values stay linear") {
  // 100000 nested lists: built without recursion.
  std::string deep = kProto2;
  for (int i = 0; i < 100000; ++i) deep += "]";
  for (int i = 0; i < 99999; ++i) deep += "a";
  deep += ".";
  const PickleDocument doc = read(deep);
  CHECK(doc.values.size() == 100000);
  // A list of 30 levels, each holding the previous one twice (2^30 leaves if copied): 31 lists.
  std::string laughs = kProto2 + "]q" + std::string(1, '\0') + "0";
  for (int i = 1; i <= 30; ++i) {
    laughs += "](h" + std::string(1, static_cast<char>(i - 1)) + "h" +
              std::string(1, static_cast<char>(i - 1)) + "eq" +
              std::string(1, static_cast<char>(i));
    laughs += "0";
  }
  laughs += "h\x1e.";
  const PickleDocument shared = read(laughs);
  CHECK(shared.values.size() == 31);
  CHECK(shared.root->items.size() == 2);
  CHECK(shared.root->items[0] == shared.root->items[1]);
}

TEST_CASE("unpickler: protocol 2 module names and the refused opcodes") {
  CHECK(canonical_module("__builtin__") == "builtins");
  CHECK(canonical_module("copy_reg") == "copyreg");
  CHECK(canonical_module("ultralytics.nn.tasks") == "ultralytics.nn.tasks");
  CHECK(refusal(kProto2 + "P0\n.") ==
        "pickle has a text persistent id (torch.save writes BINPERSID) at byte 2");
  CHECK(refusal(kProto2 + "(ios\nsystem\n.") ==
        "pickle creates an object with INST/OBJ (torch.save writes protocol 2) at byte 3");
  CHECK(refusal(kProto2 + "\x82\x01.") == "pickle refers to the extension registry at byte 2");
  CHECK(refusal(kProto2 + "\x97.") == "pickle uses out-of-band buffers at byte 2");
}

TEST_CASE("unpickler: a pickle building more values than any checkpoint needs is refused") {
  // kMaxPickleValues EMPTY_LISTs fit; one more is refused at its opcode, before it is built.
  std::string fits = kProto2 + std::string(kMaxPickleValues, ']');
  std::string over = fits + "].";
  CHECK(refusal(over) ==
        "pickle builds more than 2000000 values (no model checkpoint needs that "
        "many) at byte " +
            std::to_string(kMaxPickleValues + 2));
  fits += std::string(kMaxPickleValues - 1, '0') + ".";  // pops all but one
  CHECK(refusal(fits).empty());
}
