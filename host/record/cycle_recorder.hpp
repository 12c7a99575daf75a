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
  // A file is closed and the next begun past this many compressed bytes.
  uint64_t file_bytes = uint64_t{64} << 20;
  // The oldest files are removed while all of them together are larger.
  uint64_t max_bytes = uint64_t{4} << 30;
  // Serialized calls waiting for the writer; past this, calls are left out.
  size_t queue_bytes = size_t{64} << 20;
  // Entries reach the file (and a reader) at least this often.
  std::chrono::milliseconds flush_interval{1000};
};

// What the recorder did since start (tests, the host's log at shutdown).
struct RecorderStats {
  uint64_t calls = 0;    // written
  uint64_t dropped = 0;  // left out
  uint64_t bytes = 0;    // compressed, all files
  uint64_t files = 0;    // begun
  uint64_t removed = 0;  // removed for max_bytes
};

class CycleRecorder {
 public:
  // Throws RecordError when `options.dir` is not a writable directory.
  // `metrics` may be null.
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
  void push(Item item);
  void run();
  void write_item(Item& item);
  // Begins the next file: header, sessions, checkpoints.
  void open_file();
  void close_file();
  // Keeps the files under max_bytes, oldest first.
  void remove_old_files();
  // The delta a call applied, into the session's mirror (taking its
  // upserts).
  void follow_delta(const std::string& session_id, v1::NodeTableDelta& delta);
  void write(const v1::RecordEntry& entry);
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
  v1::RecordedPluginSet plugin_set_;
  std::unordered_map<std::string, SessionState> sessions_;
  std::unique_ptr<RecordFileWriter> file_;
  uint64_t sequence_ = 0;
  uint64_t closed_bytes_ = 0;  // of the files closed so far
  uint64_t reported_calls_ = 0, reported_bytes_ = 0;  // to the metrics
  std::chrono::steady_clock::time_point last_flush_;
  std::thread writer_;  // last: starts after everything above exists
};

}  // namespace schedplug::host
