//===- Archive.cpp - the PT2 archive's entries, read with libzip ----------===//
//
// The PT2 Archive Spec: a zip whose entries share one root folder
// (`<root>/archive_format` holding "pt2", `<root>/models/<model>.json`, the
// weights under `<root>/data/`). torch.export.save stores entries
// uncompressed; archives rewritten by other tools may deflate them, which
// libzip reads as well.
//
//===----------------------------------------------------------------------===//

#include "Archive.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <zip.h>

#include <memory>
#include <optional>

using namespace vram::torch_export;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

struct ZipCloser {
  void operator()(zip_t *archive) const { zip_discard(archive); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipCloser>;

struct ZipFileCloser {
  void operator()(zip_file_t *file) const { zip_fclose(file); }
};

/// The bytes of entry `index`, at most kMaxEntryBytes.
llvm::Expected<std::string> readEntry(zip_t *archive, zip_uint64_t index,
                                      llvm::StringRef name) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive, index, 0, &stat) != 0 ||
      !(stat.valid & ZIP_STAT_SIZE))
    return makeError("cannot read the size of '" + name + "'");
  if (stat.size > kMaxEntryBytes)
    return makeError("'" + name + "' holds " + llvm::Twine(stat.size) +
                     " bytes, more than the " + llvm::Twine(kMaxEntryBytes) +
                     " this reader accepts");
  std::unique_ptr<zip_file_t, ZipFileCloser> file(
      zip_fopen_index(archive, index, 0));
  if (!file)
    return makeError("cannot open '" + name + "': " + zip_strerror(archive));
  std::string data(stat.size, '\0');
  uint64_t done = 0;
  while (done < stat.size) {
    zip_int64_t n = zip_fread(file.get(), data.data() + done, stat.size - done);
    if (n <= 0)
      return makeError("cannot read '" + name +
                       "': " + zip_file_strerror(file.get()));
    done += n;
  }
  return data;
}

} // namespace

llvm::Expected<ArchiveModel>
vram::torch_export::readArchiveModel(llvm::StringRef bytes) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t *source =
      zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!source) {
    std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    return makeError("cannot read the archive: " + message);
  }
  ZipArchive archive(
      zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive) {
    std::string message = zip_error_strerror(&error);
    zip_source_free(source);
    zip_error_fini(&error);
    return makeError("not a zip archive (" + message +
                     "): a .pt2 file is what torch.export.save writes");
  }
  zip_error_fini(&error);

  // <root>/models/<name>.json and <root>/archive_format.
  llvm::SmallVector<std::pair<zip_uint64_t, std::string>> models;
  std::optional<zip_uint64_t> formatEntry;
  zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char *cname = zip_get_name(archive.get(), i, 0);
    if (!cname)
      continue;
    llvm::StringRef name(cname);
    llvm::SmallVector<llvm::StringRef, 4> parts;
    name.split(parts, '/');
    if (parts.size() == 2 && parts[1] == "archive_format")
      formatEntry = i;
    if (parts.size() == 3 && parts[1] == "models" &&
        parts[2].ends_with(".json") && parts[2].size() > 5)
      models.push_back({zip_uint64_t(i), name.str()});
  }
  if (!formatEntry)
    return makeError("the zip has no archive_format entry: not a PT2 archive "
                     "(torch.export.save writes one)");
  llvm::Expected<std::string> format =
      readEntry(archive.get(), *formatEntry, "archive_format");
  if (!format)
    return format.takeError();
  if (llvm::StringRef(*format).trim() != "pt2")
    return makeError("archive_format is '" +
                     llvm::StringRef(*format).trim().take_front(32) +
                     "', not 'pt2'");
  if (models.empty())
    return makeError("the archive holds no exported program "
                     "(<root>/models/<name>.json)");
  const auto *chosen = models.begin();
  if (models.size() > 1) {
    chosen = llvm::find_if(models, [](const auto &m) {
      return llvm::sys::path::filename(m.second) == "model.json";
    });
    if (chosen == models.end()) {
      std::string names;
      for (const auto &m : models)
        names += (names.empty() ? "" : ", ") + m.second;
      return makeError("the archive holds several programs and none is "
                       "named 'model': " +
                       names);
    }
  }
  llvm::Expected<std::string> json =
      readEntry(archive.get(), chosen->first, chosen->second);
  if (!json)
    return json.takeError();
  ArchiveModel model{chosen->second, std::move(*json), std::nullopt};
  llvm::StringRef root = llvm::StringRef(chosen->second).split('/').first;
  llvm::StringRef stem = llvm::sys::path::stem(llvm::StringRef(chosen->second));
  std::string configName =
      (root + "/data/weights/" + stem + "_weights_config.json").str();
  zip_int64_t configIndex =
      zip_name_locate(archive.get(), configName.c_str(), 0);
  if (configIndex >= 0) {
    llvm::Expected<std::string> config =
        readEntry(archive.get(), configIndex, configName);
    if (!config)
      return config.takeError();
    model.weightsConfig = std::move(*config);
  }
  return model;
}
