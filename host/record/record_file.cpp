#include "host/record/record_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

namespace schedplug::host {
namespace {

namespace io = google::protobuf::io;

constexpr std::array<char, 8> kMagic{'S', 'P',  'R',  'E',
                                     'C', '\0', '\0', kRecordFormatVersion};

// An entry far larger than any call (a full table of a 20000-node cluster
// is well under this): a corrupt length, not a real entry.
constexpr int kMaxEntryBytes = 1 << 30;

uint64_t usage_of(const struct stat& st) {
  return std::max<uint64_t>(static_cast<uint64_t>(st.st_size),
                            static_cast<uint64_t>(st.st_blocks) * 512);
}

}  // namespace

std::string record_file_name(uint64_t sequence) {
  return fmt::format("{}{:0{}}{}", kRecordFilePrefix, sequence,
                     kRecordSequenceDigits, kRecordFileSuffix);
}

std::optional<uint64_t> record_file_sequence(std::string_view name) {
  if (!name.starts_with(kRecordFilePrefix) ||
      !name.ends_with(kRecordFileSuffix)) {
    return std::nullopt;
  }
  name.remove_prefix(std::char_traits<char>::length(kRecordFilePrefix));
  name.remove_suffix(std::char_traits<char>::length(kRecordFileSuffix));
  // 19 digits always fit in 64 bits.
  if (name.empty() || name.size() > 19) return std::nullopt;
  uint64_t sequence = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    sequence = sequence * 10 + static_cast<uint64_t>(c - '0');
  }
  return sequence;
}

uint64_t record_disk_usage(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? usage_of(st) : 0;
}

RecordFileWriter::RecordFileWriter(const std::filesystem::path& path)
    : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd_ < 0) {
    throw RecordError(fmt::format(
        "cannot create the recording file {}: {}; check that --record's "
        "directory exists and is writable by the host",
        path.string(), std::strerror(errno)));
  }
  if (::write(fd_, kMagic.data(), kMagic.size()) !=
      static_cast<ssize_t>(kMagic.size())) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    // An empty file left behind replays nothing and only fills the
    // directory (a full disk would leave one per attempt).
    ::unlink(path.c_str());
    throw RecordError(
        fmt::format("cannot write the recording file {}: {}", path.string(),
                    error != 0 ? std::strerror(error) : "short write"));
  }
  file_ = std::make_unique<io::FileOutputStream>(fd_);
  io::GzipOutputStream::Options options;
  options.format = io::GzipOutputStream::GZIP;
  options.compression_level = 6;
  gzip_ = std::make_unique<io::GzipOutputStream>(file_.get(), options);
}

RecordFileWriter::~RecordFileWriter() {
  try {
    close();
  } catch (const RecordError&) {
  }
}

void RecordFileWriter::check(bool ok, const char* what) {
  if (ok) return;
  const int error = file_ ? file_->GetErrno() : 0;
  throw RecordError(
      fmt::format("cannot {} the recording file {}: {}", what, path_.string(),
                  error != 0 ? std::strerror(error) : "compression failed"));
}

void RecordFileWriter::write(const v1::RecordEntry& entry) {
  check(google::protobuf::util::SerializeDelimitedToZeroCopyStream(entry,
                                                                   gzip_.get()),
        "write");
  unflushed_ += entry.GetCachedSize();
}

void RecordFileWriter::write_serialized(const std::string& entry) {
  {
    io::CodedOutputStream out(gzip_.get());
    out.WriteVarint32(static_cast<uint32_t>(entry.size()));
    out.WriteRaw(entry.data(), static_cast<int>(entry.size()));
    check(!out.HadError(), "write");
  }
  unflushed_ += entry.size();
}

void RecordFileWriter::flush() {
  check(gzip_->Flush(), "write");
  check(file_->Flush(), "write");
  unflushed_ = 0;
}

void RecordFileWriter::close() {
  if (fd_ < 0) return;
  const bool gzip_ok = gzip_->Close();
  bool file_ok = file_->Flush();
  closed_bytes_ = bytes();
  file_ok = file_->Close() && file_ok;  // closes fd_
  fd_ = -1;
  gzip_.reset();
  const int error = file_->GetErrno();
  file_.reset();
  if (!gzip_ok || !file_ok) {
    throw RecordError(
        fmt::format("cannot finish the recording file {}: {}", path_.string(),
                    error != 0 ? std::strerror(error) : "compression failed"));
  }
}

uint64_t RecordFileWriter::bytes() const {
  if (fd_ < 0) return closed_bytes_;
  struct stat st {};
  return ::fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

uint64_t RecordFileWriter::disk_usage() const {
  if (fd_ < 0) return record_disk_usage(path_);
  struct stat st {};
  return ::fstat(fd_, &st) == 0 ? usage_of(st) : 0;
}

RecordFileReader::RecordFileReader(const std::filesystem::path& path)
    : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw RecordError(fmt::format("cannot open the recording file {}: {}",
                                  path.string(), std::strerror(errno)));
  }
  std::array<char, 8> magic{};
  const ssize_t n = ::read(fd_, magic.data(), magic.size());
  if (n != static_cast<ssize_t>(magic.size()) ||
      !std::equal(magic.begin(), magic.begin() + 7, kMagic.begin())) {
    ::close(fd_);
    throw RecordError(
        fmt::format("{} is not a schedplug recording (it does not begin with "
                    "the recording magic); give replay the directory "
                    "schedplug-host --record wrote",
                    path.string()));
  }
  if (magic[7] != static_cast<char>(kRecordFormatVersion)) {
    ::close(fd_);
    throw RecordError(fmt::format(
        "{} is a recording of format version {}, this schedplug reads "
        "version {}; replay it with the schedplug of the host that wrote it",
        path.string(), static_cast<int>(static_cast<uint8_t>(magic[7])),
        static_cast<int>(kRecordFormatVersion)));
  }
  file_ = std::make_unique<io::FileInputStream>(fd_);
  file_->SetCloseOnDelete(true);
  gzip_ = std::make_unique<io::GzipInputStream>(file_.get(),
                                                io::GzipInputStream::GZIP);
}

RecordFileReader::~RecordFileReader() = default;

bool RecordFileReader::next(v1::RecordEntry& entry) {
  if (done_) return false;
  bool clean_eof = false;
  entry.Clear();
  io::CodedInputStream in(gzip_.get());
  in.SetTotalBytesLimit(kMaxEntryBytes);
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) {
    clean_eof = in.CurrentPosition() == 0 && gzip_->ZlibErrorCode() >= 0;
    done_ = true;
    truncated_ = !clean_eof;
    return false;
  }
  if (size > static_cast<uint32_t>(kMaxEntryBytes)) {
    done_ = truncated_ = true;
    return false;
  }
  const auto limit = in.PushLimit(static_cast<int>(size));
  if (!entry.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage() ||
      in.BytesUntilLimit() != 0) {
    done_ = truncated_ = true;
    return false;
  }
  in.PopLimit(limit);
  return true;
}

std::vector<std::filesystem::path> record_files(
    const std::filesystem::path& dir) {
  std::vector<std::pair<uint64_t, std::filesystem::path>> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::optional<uint64_t> sequence = record_file_sequence(name);
    std::error_code type_ec;
    if (sequence && it->is_regular_file(type_ec))
      found.emplace_back(*sequence, it->path());
  }
  if (ec) {
    throw RecordError(fmt::format("cannot read the recording directory {}: {}",
                                  dir.string(), ec.message()));
  }
  // By number: record-1000000 follows record-999999, whatever the widths.
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> files;
  files.reserve(found.size());
  for (auto& [sequence, path] : found) files.push_back(std::move(path));
  return files;
}

}  // namespace schedplug::host
