// --record DIR: every pod cycle's calls as asked and as answered, written
// off the critical path to rotating, size-capped files
// (record_file.hpp) that `schedplug replay` re-evaluates with other plugin
// versions (docs/record-replay.md).
//
// The calling thread only serializes the request and the answer and
// queues them; one writer thread compresses and writes. Past
// `queue_bytes` waiting, a call is left out (counted) but its node-table
// delta is kept, so the recorded table stays right. Each file begins with
// the plugin set, and every open session's Handshake and node table (the
// writer's TableMirror), so any file replays alone.
//
// What the recording files and their directory take on disk, the file
// being written included, stays within `max_bytes`: before an entry could
// take it past, the oldest files are removed, or the file is closed and
// the next begun. A write error (a full disk) pauses the recording: calls
// are left out (counted) until a retry, after `retry_initial` and then
// twice as long each time up to `retry_max`, opens a file that takes its
// start; a bounded number of lines is logged meanwhile.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include <google/protobuf/message.h>
#include <grpcpp/support/status.h>

#include "host/record/record_file.hpp"
#include "host/record/table_mirror.hpp"
#include "schedplug/v1/record.pb.h"

namespace schedplug::host {

class HostMetrics;

struct RecorderOptions {
  std::filesystem::path dir;
  // A file is closed and the next begun past this many compressed bytes,
  // or past a quarter of max_bytes if that is less (removing the oldest
  // file then keeps most of the recording).
  uint64_t file_bytes = uint64_t{64} << 20;
  // What the files and the directory may take on disk (record_disk_usage),
  // the file being written included; at least kMinRecordMaxBytes.
  uint64_t max_bytes = uint64_t{4} << 30;
  // Serialized calls waiting for the writer; past this, calls are left out.
  size_t queue_bytes = size_t{64} << 20;
  // Entries reach the file (and a reader) at least this often.
  std::chrono::milliseconds flush_interval{1000};
  // After a write error, the pause before the first retry, and the longest
  // pause between retries (each failed retry doubles it).
  std::chrono::milliseconds retry_initial{1000};
  std::chrono::milliseconds retry_max{60000};
};

// The smallest max_bytes: room for the directory, a file's start and some
// calls on a filesystem of 4 KiB blocks.
inline constexpr uint64_t kMinRecordMaxBytes = uint64_t{64} << 10;

// What the recorder did since start (tests, the host's log at shutdown).
struct RecorderStats {
  uint64_t calls = 0;         // written
  uint64_t dropped = 0;       // left out
  uint64_t bytes = 0;         // compressed, all files
  uint64_t files = 0;         // begun
  uint64_t removed = 0;       // removed for max_bytes
  uint64_t write_errors = 0;  // files that could not be created or written
};

class CycleRecorder {
 public:
  // Throws RecordError when `options.dir` is not a directory or
  // `options.max_bytes` is below kMinRecordMaxBytes. `metrics` may be null.
  CycleRecorder(RecorderOptions options, HostMetrics* metrics);
  // Writes what is queued and closes the file.
  ~CycleRecorder();
  CycleRecorder(const CycleRecorder&) = delete;
  CycleRecorder& operator=(const CycleRecorder&) = delete;

  // Thread-safe; none of them waits for the disk.
  // The plugin set that answers from now on (start-up, each reload).
  void plugin_set(v1::RecordedPluginSet set);
  // A Handshake that opened `session_id`.
  void session_opened(const std::string& session_id,
                      const v1::HandshakeRequest& handshake);
  // The session is gone: its table is not checkpointed any more.
  void session_closed(const std::string& session_id);
  // One call. `table_version`: the session's table version after it
  // (the request's delta was applied when it equals the delta's
  // new_version); `delta`: the request's delta (nullptr: none).
  void call(v1::RecordedMethod method, const std::string& session_id,
            const google::protobuf::Message& request,
            const google::protobuf::Message& response,
            const grpc::Status& status, uint64_t table_version,
            uint32_t table_nodes, std::chrono::nanoseconds duration,
            const v1::NodeTableDelta* delta);
  // Waits until everything queued before it is written and flushed.
  void flush();
  RecorderStats stats() const;
  const std::filesystem::path& dir() const { return options_.dir; }

 private:
  struct Item;
  struct SessionState {
    v1::HandshakeRequest handshake;
    TableMirror table;
  };
  // A recording file other than the one being written.
  struct OnDisk {
    std::filesystem::path path;
    uint64_t usage = 0;  // record_disk_usage
  };
  using Clock = std::chrono::steady_clock;

  void push(Item item);
  void run();
  void write_item(Item& item);
  // A call or a gap: into the current file (a new one when none is open
  // or it is full), or left out while the recording is paused.
  void record_call(Item& item);
  // The item is not in the recording: counted, its delta still followed.
  void leave_out(Item& item);
  // A file calls can go to: the current one, or a new one unless the
  // recording is paused.
  bool ready_for_calls();
  // Begins the next file: header, sessions, checkpoints, after making room
  // for them. On failure no file is open and the recording is paused.
  void open_file();
  // Closes the current file; false (and the recording paused) on an error.
  bool close_file();
  // The current file, closed: counted, and kept among closed_ if it holds
  // a call, removed otherwise (it would replay nothing).
  void drop_file();
  // Writes `entry` into the current file after making room for it under
  // max_bytes (removing the oldest files, or closing this one and
  // beginning the next). false: not written (no room, or a write error).
  bool write_entry(const v1::RecordEntry& entry);
  // The same without making room (the caller made it). false: a write
  // error, and the recording is paused.
  bool put(const v1::RecordEntry& entry);
  // Flushes the current file; false (and the recording paused) on an
  // error.
  bool flush_file();
  // Whether `bytes` more uncompressed bytes fit: in the current file, or
  // in a new one.
  bool fits(uint64_t bytes) const;
  bool fits_new_file(uint64_t bytes) const;
  // At most what `bytes` uncompressed bytes and the file's end add to its
  // size on disk.
  uint64_t growth_bound(uint64_t bytes) const;
  // Flushes and removes the oldest files until `bytes` fit in the current
  // file; false when they do not.
  bool make_room(uint64_t bytes);
  // Reads the directory: closed_, closed_usage_, dir_usage_.
  void scan_dir();
  bool remove_oldest();
  // A write error, or no room for a file's start: the current file is
  // abandoned (removed if it holds no call) and the recording pauses.
  void fail(const std::string& error, bool write_error);
  // The delta a call applied, into the session's mirror (taking its
  // upserts).
  void follow_delta(const std::string& session_id, v1::NodeTableDelta& delta);
  // Brings stats_.bytes and the metrics up to what the files hold.
  void count_bytes();

  const RecorderOptions options_;
  HostMetrics* const metrics_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable written_;
  std::deque<Item> queue_;
  size_t queued_bytes_ = 0;
  uint64_t pushed_ = 0, done_ = 0;
  bool stop_ = false;
  RecorderStats stats_;

  // The writer thread's own.
  const uint64_t file_limit_;  // file_bytes, at most max_bytes / 4
  v1::RecordedPluginSet plugin_set_;
  std::unordered_map<std::string, SessionState> sessions_;
  std::unique_ptr<RecordFileWriter> file_;
  // Calls and gaps in file_, those of them on disk (flushed), and the
  // calls (not gaps) written since the last flush.
  uint64_t file_calls_ = 0, file_flushed_calls_ = 0, unflushed_calls_ = 0;
  uint64_t sequence_ = 0;
  uint64_t closed_bytes_ = 0;  // of the files closed so far
  uint64_t reported_calls_ = 0, reported_bytes_ = 0;  // to the metrics
  Clock::time_point last_flush_;
  // On disk besides file_, as of the last scan and what was done since:
  // the other recording files (oldest first) and the directory itself.
  std::deque<OnDisk> closed_;
  uint64_t closed_usage_ = 0;
  uint64_t dir_usage_ = 0;
  uint64_t block_ = 4096;  // the directory's filesystem block
  // Paused after a write error until retry_at_; the current pause.
  bool paused_ = false;
  Clock::time_point retry_at_, paused_since_, last_log_;
  std::chrono::milliseconds backoff_{0};
  uint64_t left_out_while_paused_ = 0;
  Clock::time_point last_no_room_log_;
  bool no_room_logged_ = false;
  std::thread writer_;  // last: starts after everything above exists
};

}  // namespace schedplug::host
