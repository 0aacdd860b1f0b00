// See torch_file.h.
// Tested by tests/model/test_torch_load.cpp: TorchFile reading of crafted files: views, short
//   storages, views past storage, unknown storage type, nesting/cycles refused.
#include "model/torch_file.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cstring>

#include "core/error.h"

namespace trainer::model {
namespace {

constexpr int kMaxDepth = 128;

at::ScalarType scalar_type(const std::string& storage_type) {
  static const std::map<std::string, at::ScalarType> types{
      {"FloatStorage", at::kFloat},
      {"DoubleStorage", at::kDouble},
      {"HalfStorage", at::kHalf},
      {"BFloat16Storage", at::kBFloat16},
      {"LongStorage", at::kLong},
      {"IntStorage", at::kInt},
      {"ShortStorage", at::kShort},
      {"CharStorage", at::kChar},
      {"ByteStorage", at::kByte},
      {"BoolStorage", at::kBool},
      {"ComplexHalfStorage", at::kComplexHalf},
      {"ComplexFloatStorage", at::kComplexFloat},
      {"ComplexDoubleStorage", at::kComplexDouble}};
  return types.at(storage_type);
}

}  // namespace

TorchFile::TorchFile(const std::vector<char>& bytes, DescribeProblem describe)
    : bytes_(bytes), describe_(std::move(describe)) {
  if (const auto problem = index_torch_zip(bytes_, &index_)) fail(*problem);
  if (const ZipRecord* order = index_.find("byteorder")) {
    const std::string_view text(bytes_.data() + order->start, order->size);
    if (text != "little")
      fail("its tensors are stored " + std::string(text.substr(0, 16)) +
           "-endian (only little-endian files are read)");
  }
  const ZipRecord& pickle = *index_.find("data.pkl");
  try {
    pickle_ = read_pickle(reinterpret_cast<const unsigned char*>(bytes_.data()) + pickle.start,
                          pickle.size);
  } catch (const PickleError& e) {
    fail(e.what());
  }
}

void TorchFile::fail(const std::string& problem) const {
  throw core::InputError(describe_(problem));
}

at::Tensor TorchFile::tensor(const PyValue& value) const {
  if (!value.is(PyKind::kTensor)) fail("expected a tensor, found a " + value.describe());
  const PickledTensor& t = pickle_.tensors.at(value.index);
  const PickledStorage& s = pickle_.storages.at(t.storage);
  auto cached = storages_.find(s.key);
  if (cached == storages_.end()) {
    const ZipRecord* record = index_.find("data/" + s.key);
    if (record == nullptr && s.elements > 0) {
      fail(fmt::format("storage record {}/data/{} is missing", index_.archive, s.key));
    }
    const uint64_t available = record == nullptr ? 0 : record->size;
    const uint64_t elements = available / static_cast<uint64_t>(s.element_size);
    at::Tensor storage =
        at::empty({static_cast<int64_t>(elements)}, at::TensorOptions(scalar_type(s.type)));
    if (elements > 0) {
      std::memcpy(storage.data_ptr(), bytes_.data() + record->start,
                  elements * static_cast<uint64_t>(s.element_size));
    }
    cached = storages_.emplace(s.key, storage).first;
  }
  const at::Tensor& storage = cached->second;
  if (storage.scalar_type() != scalar_type(s.type)) {
    fail(fmt::format("storage {}/data/{} is declared as two types", index_.archive, s.key));
  }
  if (static_cast<uint64_t>(storage.numel()) < s.elements) {
    const ZipRecord* record = index_.find("data/" + s.key);
    fail(fmt::format("storage record {}/data/{} holds {} bytes, its tensor needs {}",
                     index_.archive, s.key, record == nullptr ? 0 : record->size,
                     s.elements * s.element_size));
  }
  return storage.as_strided(t.sizes, t.strides, t.offset);
}

c10::IValue TorchFile::to_ivalue(const PyValue& value) const {
  std::map<const PyValue*, c10::IValue> done;
  return convert(value, 0, done);
}

c10::IValue TorchFile::convert(const PyValue& value, int depth,
                               std::map<const PyValue*, c10::IValue>& done) const {
  if (depth > kMaxDepth) fail(fmt::format("its values nest deeper than {} levels", kMaxDepth));
  switch (value.kind) {
    case PyKind::kNone:
      return c10::IValue();
    case PyKind::kBool:
      return c10::IValue(value.flag);
    case PyKind::kInt:
      return c10::IValue(value.integer);
    case PyKind::kFloat:
      return c10::IValue(value.real);
    case PyKind::kString:
      return c10::IValue(value.text);
    case PyKind::kTensor:
      return c10::IValue(tensor(value));
    case PyKind::kList:
    case PyKind::kTuple:
    case PyKind::kDict:
      break;
    default:
      fail("it holds a " + value.describe() + ", not plain data");
  }
  // Containers: converted once each (a pickle may refer to one many times), never into a cycle.
  if (const auto it = done.find(&value); it != done.end()) {
    if (it->second.isNone()) fail("a container in it contains itself");
    return it->second;
  }
  done.emplace(&value, c10::IValue());  // in progress
  c10::IValue out;
  if (value.is(PyKind::kDict)) {
    c10::impl::GenericDict dict(c10::AnyType::get(), c10::AnyType::get());
    for (const auto& [k, v] : value.entries) {
      const c10::IValue key = convert(*k, depth + 1, done);
      if (!key.isString() && !key.isInt() && !key.isDouble() && !key.isBool() && !key.isNone()) {
        fail("a dict key is a " + k->describe());
      }
      dict.insert_or_assign(key, convert(*v, depth + 1, done));
    }
    out = c10::IValue(dict);
  } else {
    std::vector<c10::IValue> items;
    items.reserve(value.items.size());
    for (const PyValue* item : value.items) items.push_back(convert(*item, depth + 1, done));
    if (value.is(PyKind::kTuple)) {
      out = c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
    } else {
      c10::impl::GenericList list(c10::AnyType::get());
      for (auto& item : items) list.push_back(std::move(item));
      out = c10::IValue(list);
    }
  }
  done[&value] = out;
  return out;
}

}  // namespace trainer::model
