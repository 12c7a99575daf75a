// The files of a recording (proto/schedplug/v1/record.proto): an 8-byte
// magic with the format version, then a gzip stream of length-prefixed
// RecordEntry messages. Written by the host's CycleRecorder, read by
// `schedplug replay`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "schedplug/v1/record.pb.h"

namespace google::protobuf::io {
class FileInputStream;
class FileOutputStream;
class GzipInputStream;
class GzipOutputStream;
}  // namespace google::protobuf::io

namespace schedplug::host {

inline constexpr uint8_t kRecordFormatVersion = 1;
// Recording files are named record-<sequence>.sprec.gz, the sequence
// zero-padded to kRecordSequenceDigits (hosts before it wrote 6 digits).
// Files are ordered by the number the name holds, never by the name: a
// name of another width sorts wrongly as text.
inline constexpr char kRecordFilePrefix[] = "record-";
inline constexpr char kRecordFileSuffix[] = ".sprec.gz";
inline constexpr int kRecordSequenceDigits = 10;
std::string record_file_name(uint64_t sequence);
// The sequence number in the name of a recording file (a file name, not a
// path); nullopt when it is not kRecordFilePrefix, 1 to 19 digits and
// kRecordFileSuffix.
std::optional<uint64_t> record_file_sequence(std::string_view name);

// A file that cannot be opened, written or read, or is not a recording of
// this format; what() names the file and what to do.
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One file being written. Not thread-safe (the recorder's writer thread
// owns it).
class RecordFileWriter {
 public:
  // Creates `path` (refusing to overwrite one that exists) and writes
  // the magic. Throws RecordError.
  explicit RecordFileWriter(const std::filesystem::path& path);
  ~RecordFileWriter();  // close()s, swallowing errors
  RecordFileWriter(const RecordFileWriter&) = delete;
  RecordFileWriter& operator=(const RecordFileWriter&) = delete;

  // Throws RecordError when the write fails (disk full...).
  void write(const v1::RecordEntry& entry);
  // The same, for an entry already serialized.
  void write_serialized(const std::string& entry);
  // Pushes what is buffered to the file (a reader, or a crash, then sees
  // every entry written so far). Throws RecordError.
  void flush();
  // Ends the gzip stream and closes the file. Throws RecordError.
  void close();
  // The file's size: what reached it so far (the compressor and a write
  // buffer hold some more until flush()).
  uint64_t bytes() const;
  // What the file takes on disk (record_disk_usage).
  uint64_t disk_usage() const;
  const std::filesystem::path& path() const { return path_; }
  // Uncompressed bytes written since the last flush() (what bytes() does
  // not show yet).
  uint64_t unflushed() const { return unflushed_; }

 private:
  void check(bool ok, const char* what);
  uint64_t unflushed_ = 0;
  std::filesystem::path path_;
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileOutputStream> file_;
  std::unique_ptr<google::protobuf::io::GzipOutputStream> gzip_;
  uint64_t closed_bytes_ = 0;
};

// Reads one file's entries in order.
class RecordFileReader {
 public:
  // Throws RecordError when the file cannot be opened or does not begin
  // with the magic of this format version.
  explicit RecordFileReader(const std::filesystem::path& path);
  ~RecordFileReader();
  RecordFileReader(const RecordFileReader&) = delete;
  RecordFileReader& operator=(const RecordFileReader&) = delete;

  // The next entry; false at the end of the file. A file cut short ends
  // at its last whole entry, and truncated() then says so.
  bool next(v1::RecordEntry& entry);
  bool truncated() const { return truncated_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileInputStream> file_;
  std::unique_ptr<google::protobuf::io::GzipInputStream> gzip_;
  bool done_ = false;
  bool truncated_ = false;
};

// The recording files of `dir` (names record_file_sequence reads), oldest
// (lowest sequence number) first. Throws RecordError when `dir` cannot be
// read.
std::vector<std::filesystem::path> record_files(
    const std::filesystem::path& dir);

// What a file or directory takes on disk as `du` and the kubelet count it
// for an emptyDir's sizeLimit: its allocated blocks, or its size where a
// filesystem reports fewer blocks than bytes. 0 when it cannot be read.
uint64_t record_disk_usage(const std::filesystem::path& path);

}  // namespace schedplug::host
