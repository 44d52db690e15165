//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Format: "\x93NUMPY", major and minor version bytes, the header length
// (2 bytes little endian in 1.0, 4 in 2.0/3.0), then a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces and a newline, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace vram {

static Error npyError(StringRef name, const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), name + ": " + msg.str());
}

/// The value of `key` in the header dict: the text up to the next top-level
/// comma (a tuple counts as one value).
static std::optional<StringRef> headerValue(StringRef header, StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t at = header.find(quoted);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  size_t end =
      rest.starts_with("(") ? rest.find(')') + 1 : rest.find_first_of(",}");
  if (end == StringRef::npos || end == 0)
    return std::nullopt;
  return rest.take_front(end).trim();
}

Expected<NpyArray> parseNpy(StringRef contents, StringRef name) {
  if (!contents.starts_with("\x93NUMPY") || contents.size() < 10)
    return npyError(name, "not a NumPy .npy file (bad magic)");
  unsigned major = (unsigned char)contents[6];
  size_t headerLen, start;
  auto byteAt = [&](size_t i) -> size_t { return (unsigned char)contents[i]; };
  if (major == 1) {
    headerLen = byteAt(8) | byteAt(9) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (contents.size() < 12)
      return npyError(name, "truncated header");
    headerLen =
        byteAt(8) | byteAt(9) << 8 | byteAt(10) << 16 | byteAt(11) << 24;
    start = 12;
  } else {
    return npyError(name, "unsupported .npy version " + Twine(major));
  }
  if (start + headerLen > contents.size())
    return npyError(name, "truncated header");
  StringRef header = contents.substr(start, headerLen);
  NpyArray array;
  std::optional<StringRef> descr = headerValue(header, "descr");
  std::optional<StringRef> order = headerValue(header, "fortran_order");
  std::optional<StringRef> shape = headerValue(header, "shape");
  if (!descr || !order || !shape)
    return npyError(name, "malformed header '" + header.trim() + "'");
  array.descr = descr->trim("'\"").str();
  if (*order != "False")
    return npyError(name, "Fortran-order arrays are not supported");
  StringRef dims = shape->trim("()");
  int64_t count = 1;
  while (!dims.trim().empty()) {
    auto [dim, rest] = dims.split(',');
    int64_t d;
    if (dim.trim().getAsInteger(10, d) || d < 0)
      return npyError(name, "malformed shape '" + *shape + "'");
    array.shape.push_back(d);
    count *= d;
    dims = rest;
  }
  size_t elementBytes = 0;
  if (array.descr.size() >= 3 &&
      (array.descr[0] == '<' || array.descr[0] == '|'))
    StringRef(array.descr).drop_front(2).getAsInteger(10, elementBytes);
  if (!elementBytes)
    return npyError(name, "unsupported dtype '" + array.descr +
                              "' (little-endian numbers only)");
  StringRef data = contents.drop_front(start + headerLen);
  if (data.size() != count * elementBytes)
    return npyError(name, "has " + Twine(data.size()) + " data bytes, shape " +
                              formatShape(array.shape) + " of '" + array.descr +
                              "' needs " + Twine(count * elementBytes));
  array.data.assign(data.begin(), data.end());
  return array;
}

Expected<NpyArray> readNpy(StringRef path) {
  auto file = MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return npyError(path, "cannot read: " + file.getError().message());
  return parseNpy((*file)->getBuffer(), path);
}

Error writeNpy(StringRef path, StringRef descr, ArrayRef<int64_t> shape,
               const void *data, size_t bytes) {
  std::string header =
      "{'descr': '" + descr.str() +
      "', 'fortran_order': False, 'shape': " + formatShape(shape) + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return npyError(path, "cannot write: " + ec.message());
  os << "\x93NUMPY" << char(1) << char(0);
  os << char(header.size() & 0xff) << char(header.size() >> 8);
  os << header;
  os.write(static_cast<const char *>(data), bytes);
  return Error::success();
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

} // namespace vram
