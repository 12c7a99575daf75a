// CycleRecorder (cycle_recorder.hpp): the calling side that queues items and
// the writer thread that writes them. One file: the writer's size accounting
// (fits, make_room, remove_oldest, the pause on a full disk) and its file
// rotation change the same counters and the same open file.
#include "host/record/cycle_recorder.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "host/metrics/host_metrics.hpp"

namespace schedplug::host {
namespace {

int64_t unix_nanos_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Between two log lines about one lasting problem (a paused recording,
// entries that do not fit).
constexpr std::chrono::minutes kLogEvery{10};

}  // namespace

struct CycleRecorder::Item {
  enum class Kind {
    kPluginSet,
    kSessionOpened,
    kSessionClosed,
    kCall,
    kGap,
    kFlush,  // a flush() marker: no entry
  };
  explicit Item(Kind k, std::string id = {})
      : kind(k), session_id(std::move(id)) {}
  Kind kind;
  std::string session_id;
  v1::RecordEntry entry;  // kPluginSet, kSessionOpened, kCall
  // The node-table delta the call applied (kCall, kGap); none when empty
  // and not full.
  v1::NodeTableDelta delta;
  bool has_delta = false;
  size_t bytes = 0;  // counted against queue_bytes
};

CycleRecorder::CycleRecorder(RecorderOptions options, HostMetrics* metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      file_limit_(std::min(options_.file_bytes, options_.max_bytes / 4)) {
  std::error_code ec;
  if (!std::filesystem::is_directory(options_.dir, ec)) {
    throw RecordError(fmt::format(
        "--record {}: not a directory; create it (writable by the host) or "
        "give another",
        options_.dir.string()));
  }
  if (options_.max_bytes < kMinRecordMaxBytes) {
    throw RecordError(fmt::format(
        "--record-max-size {} is too small: the recording files and their "
        "directory need at least {} bytes (64Ki) for a file's start and some "
        "calls; give a larger size",
        options_.max_bytes, kMinRecordMaxBytes));
  }
  struct stat st {};
  if (::stat(options_.dir.c_str(), &st) == 0 && st.st_blksize > 0)
    block_ = static_cast<uint64_t>(st.st_blksize);
  try {
    for (const auto& file : record_files(options_.dir)) {
      sequence_ =
          std::max(sequence_,
                   record_file_sequence(file.filename().string()).value_or(0));
    }
  } catch (const RecordError& e) {
    throw RecordError(std::string(e.what()) +
                      "; give --record a directory the host can read");
  }
  last_flush_ = Clock::now();
  writer_ = std::thread([this] { run(); });
}

CycleRecorder::~CycleRecorder() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
  close_file();
}

void CycleRecorder::push(Item item) {
  {
    std::lock_guard lock(mutex_);
    queued_bytes_ += item.bytes;
    queue_.push_back(std::move(item));
    ++pushed_;
  }
  wake_.notify_one();
}

void CycleRecorder::plugin_set(v1::RecordedPluginSet set) {
  Item item(Item::Kind::kPluginSet);
  *item.entry.mutable_plugin_set() = std::move(set);
  push(std::move(item));
}

void CycleRecorder::session_opened(const std::string& session_id,
                                   const v1::HandshakeRequest& handshake) {
  Item item(Item::Kind::kSessionOpened, session_id);
  v1::RecordedSession* s = item.entry.mutable_session();
  s->set_session_id(session_id);
  *s->mutable_handshake() = handshake;
  push(std::move(item));
}

void CycleRecorder::session_closed(const std::string& session_id) {
  push(Item(Item::Kind::kSessionClosed, session_id));
}

void CycleRecorder::call(v1::RecordedMethod method,
                         const std::string& session_id,
                         const google::protobuf::Message& request,
                         const google::protobuf::Message& response,
                         const grpc::Status& status, uint64_t table_version,
                         uint32_t table_nodes,
                         std::chrono::nanoseconds duration,
                         const v1::NodeTableDelta* delta) {
  Item item(Item::Kind::kCall, session_id);
  const bool applied = delta != nullptr &&
                       (delta->full() || delta->upserts_size() > 0 ||
                        delta->removed_size() > 0) &&
                       delta->new_version() == table_version;
  if (applied) {
    item.delta = *delta;
    item.has_delta = true;
  }
  bool over;
  {
    std::lock_guard lock(mutex_);
    over = queued_bytes_ > options_.queue_bytes;
  }
  if (over) {
    // Left out; the table change is not.
    if (!applied) {
      std::lock_guard lock(mutex_);
      ++stats_.dropped;
      if (metrics_) metrics_->record_dropped(1);
      return;
    }
    item.kind = Item::Kind::kGap;
    item.bytes = item.delta.ByteSizeLong();
    push(std::move(item));
    return;
  }
  v1::RecordedCall* c = item.entry.mutable_call();
  c->set_method(method);
  c->set_unix_nanos(unix_nanos_now());
  c->set_duration_micros(static_cast<uint32_t>(std::min<int64_t>(
      duration.count() / 1000, std::numeric_limits<uint32_t>::max())));
  c->set_table_nodes(table_nodes);
  c->set_table_version(table_version);
  c->set_status_code(static_cast<int32_t>(status.error_code()));
  if (!status.ok()) c->set_status_message(status.error_message());
  request.SerializeToString(c->mutable_request());
  if (status.ok()) response.SerializeToString(c->mutable_response());
  item.bytes = c->request().size() + c->response().size() +
               (applied ? c->request().size() : 0);
  push(std::move(item));
}

void CycleRecorder::flush() {
  uint64_t until;
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(Item::Kind::kFlush);
    until = ++pushed_;
  }
  wake_.notify_one();
  std::unique_lock lock(mutex_);
  written_.wait(lock, [&] { return done_ >= until || stop_; });
}

RecorderStats CycleRecorder::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CycleRecorder::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, options_.flush_interval,
                   [&] { return stop_ || !queue_.empty(); });
    std::deque<Item> batch;
    batch.swap(queue_);
    queued_bytes_ = 0;
    const bool stopping = stop_;
    lock.unlock();
    bool flush_now = false;
    for (Item& item : batch) {
      if (item.kind == Item::Kind::kFlush) {
        flush_now = true;
        continue;
      }
      write_item(item);
    }
    const auto now = Clock::now();
    if (file_ && (flush_now || stopping ||
                  now - last_flush_ >= options_.flush_interval)) {
      flush_file();
      last_flush_ = now;
      count_bytes();
    }
    lock.lock();
    done_ += batch.size();
    written_.notify_all();
    if (stopping && queue_.empty()) return;
  }
}

void CycleRecorder::write_item(Item& item) {
  switch (item.kind) {
    case Item::Kind::kPluginSet:
      plugin_set_ = item.entry.plugin_set();
      // Not written: the next file's header carries it.
      if (file_ && !write_entry(item.entry)) close_file();
      return;
    case Item::Kind::kSessionOpened: {
      SessionState& s = sessions_[item.session_id];
      s = SessionState{};
      s.handshake = item.entry.session().handshake();
      // Not written: the next file's start carries it.
      if (file_ && !write_entry(item.entry)) close_file();
      return;
    }
    case Item::Kind::kSessionClosed:
      sessions_.erase(item.session_id);
      return;
    case Item::Kind::kGap:
    case Item::Kind::kCall:
      record_call(item);
      return;
    case Item::Kind::kFlush:
      return;
  }
}

void CycleRecorder::record_call(Item& item) {
  auto gap_of = [&] {
    v1::RecordEntry entry;
    v1::RecordedGap* gap = entry.mutable_gap();
    gap->set_session_id(item.session_id);
    gap->set_calls(1);
    *gap->add_deltas() = item.delta;
    return entry;
  };
  if (item.kind == Item::Kind::kGap) item.entry = gap_of();
  bool ready = ready_for_calls();
  if (ready && file_->bytes() >= file_limit_) {
    ready = close_file();
    if (ready) open_file();
    ready = ready && file_ != nullptr;
  }
  if (!ready) {
    leave_out(item);
    return;
  }
  bool written = write_entry(item.entry);
  bool whole = item.kind == Item::Kind::kCall;
  if (!written && whole && item.has_delta && file_ != nullptr) {
    // The call does not fit; its table change must: what follows in this
    // file replays on the table it made.
    item.entry = gap_of();
    written = write_entry(item.entry);
    whole = false;
  }
  if (!written) {
    // What follows must not replay on a table that missed this delta: the
    // next file begins with the table as it is. A file with nothing else
    // is given up like a failed one, so that a change too large for any
    // file does not begin a file per call.
    if (item.has_delta && file_ != nullptr) {
      if (file_calls_ > 0) {
        close_file();
      } else {
        fail(fmt::format("a node-table change of {} bytes does not fit "
                         "under --record-max-size ({} bytes) even in a file "
                         "of its own; raise --record-max-size",
                         item.delta.ByteSizeLong(), options_.max_bytes),
             /*write_error=*/false);
      }
    }
    leave_out(item);
    return;
  }
  if (item.has_delta) follow_delta(item.session_id, item.delta);
  if (!whole) {  // put() counted a whole call
    std::lock_guard lock(mutex_);
    ++stats_.dropped;
    if (metrics_) metrics_->record_dropped(1);
  }
}

void CycleRecorder::leave_out(Item& item) {
  if (item.has_delta) follow_delta(item.session_id, item.delta);
  if (paused_) ++left_out_while_paused_;
  std::lock_guard lock(mutex_);
  ++stats_.dropped;
  if (metrics_) metrics_->record_dropped(1);
}

bool CycleRecorder::ready_for_calls() {
  if (file_ != nullptr) return true;
  if (paused_ && Clock::now() < retry_at_) return false;
  open_file();
  return file_ != nullptr;
}

void CycleRecorder::follow_delta(const std::string& session_id,
                                 v1::NodeTableDelta& delta) {
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return;  // opened before the recorder saw it
  std::string error;
  if (!it->second.table.apply(delta, &error)) {
    // The live host applied it, so its rules passed it: not expected.
    spdlog::warn(
        "recording: session {}: the recorder's copy of the node table "
        "refuses a delta the host applied ({}); the next file's checkpoint "
        "may differ from the host's table",
        session_id, error);
  }
}

uint64_t CycleRecorder::growth_bound(uint64_t bytes) const {
  // Deflate's worst case (zlib's deflateBound: stored blocks), the gzip
  // trailer and flush markers within 64 bytes, a block for rounding up
  // and one the filesystem may take for its own bookkeeping (an extent or
  // indirect block).
  return bytes + (bytes >> 12) + (bytes >> 14) + (bytes >> 25) + 64 +
         2 * block_;
}

bool CycleRecorder::fits(uint64_t bytes) const {
  return dir_usage_ + closed_usage_ + file_->disk_usage() +
             growth_bound(file_->unflushed() + bytes) <=
         options_.max_bytes;
}

bool CycleRecorder::fits_new_file(uint64_t bytes) const {
  // A block more for the directory's new entry.
  return dir_usage_ + block_ + closed_usage_ + growth_bound(bytes) <=
         options_.max_bytes;
}

bool CycleRecorder::make_room(uint64_t bytes) {
  if (fits(bytes)) return true;
  // The bound counts what the compressor holds at its worst; a flush puts
  // it on disk at its real size.
  if (!flush_file()) return false;
  while (!fits(bytes)) {
    if (!remove_oldest()) return false;
  }
  return true;
}

bool CycleRecorder::write_entry(const v1::RecordEntry& entry) {
  if (file_ == nullptr) return false;
  // The entry and its length prefix.
  const uint64_t bytes = entry.ByteSizeLong() + 10;
  if (make_room(bytes)) return put(entry);
  if (file_ == nullptr) return false;
  if (file_calls_ > 0) {
    // A new file may hold it once this one, closed, can be removed.
    if (!close_file()) return false;
    open_file();
    if (file_ == nullptr) return false;
    if (make_room(bytes)) return put(entry);
    if (file_ == nullptr) return false;
  }
  const auto now = Clock::now();
  if (!no_room_logged_ || now - last_no_room_log_ >= kLogEvery) {
    no_room_logged_ = true;
    last_no_room_log_ = now;
    spdlog::warn(
        "recording: an entry of {} bytes does not fit under "
        "--record-max-size ({} bytes) beside the directory ({} bytes) and "
        "a file's start ({} bytes); it is left out "
        "(schedplug_record_dropped_calls_total counts the calls); raise "
        "--record-max-size (at most one such line every {} minutes)",
        bytes, options_.max_bytes, dir_usage_, file_->disk_usage(),
        std::chrono::duration_cast<std::chrono::minutes>(kLogEvery).count());
  }
  return false;
}

bool CycleRecorder::put(const v1::RecordEntry& entry) {
  try {
    file_->write(entry);
  } catch (const RecordError& e) {
    fail(e.what(), /*write_error=*/true);
    return false;
  }
  if (entry.has_call() || entry.has_gap()) ++file_calls_;
  if (entry.has_call()) {
    ++unflushed_calls_;
    std::lock_guard lock(mutex_);
    ++stats_.calls;
  }
  // Bounds what the file's size does not show yet, so that files rotate
  // near their size (a flush costs the compressor a little). Should it
  // fail, fail() counts this call as left out.
  if (file_->unflushed() >=
      std::min<uint64_t>(uint64_t{1} << 20, file_limit_ / 4))
    flush_file();
  return true;
}

bool CycleRecorder::flush_file() {
  if (file_ == nullptr) return false;
  try {
    file_->flush();
  } catch (const RecordError& e) {
    fail(e.what(), /*write_error=*/true);
    return false;
  }
  unflushed_calls_ = 0;
  file_flushed_calls_ = file_calls_;
  return true;
}

void CycleRecorder::count_bytes() {
  const uint64_t total = closed_bytes_ + (file_ ? file_->bytes() : 0);
  uint64_t calls;
  {
    std::lock_guard lock(mutex_);
    stats_.bytes = total;
    calls = stats_.calls;
  }
  if (metrics_) {
    metrics_->record_written(calls - reported_calls_, total - reported_bytes_);
  }
  reported_calls_ = calls;
  reported_bytes_ = total;
}

void CycleRecorder::scan_dir() {
  closed_.clear();
  closed_usage_ = 0;
  dir_usage_ = record_disk_usage(options_.dir);
  std::vector<std::filesystem::path> files;
  try {
    files = record_files(options_.dir);
  } catch (const RecordError& e) {
    spdlog::warn("recording: {}", e.what());
  }
  for (auto& file : files) {
    const uint64_t usage = record_disk_usage(file);
    closed_.push_back({std::move(file), usage});
    closed_usage_ += usage;
  }
}

bool CycleRecorder::remove_oldest() {
  if (closed_.empty()) return false;
  const OnDisk& oldest = closed_.front();
  std::error_code ec;
  std::filesystem::remove(oldest.path, ec);  // gone already: fine
  if (ec) {
    const auto now = Clock::now();
    if (!no_room_logged_ || now - last_no_room_log_ >= kLogEvery) {
      no_room_logged_ = true;
      last_no_room_log_ = now;
      spdlog::warn(
          "recording: cannot remove {} to stay under --record-max-size: {}; "
          "calls that do not fit are left out until it can be removed "
          "(make --record's directory writable by the host)",
          oldest.path.string(), ec.message());
    }
    return false;
  }
  spdlog::info("recording: removed {} to stay under --record-max-size",
               oldest.path.string());
  closed_usage_ -= oldest.usage;
  closed_.pop_front();
  if (metrics_) metrics_->record_file_removed();
  std::lock_guard lock(mutex_);
  ++stats_.removed;
  return true;
}

void CycleRecorder::open_file() {
  scan_dir();
  // The start, so that the file replays alone: the plugin set, and every
  // session's Handshake and node table.
  std::vector<v1::RecordEntry> start;
  v1::RecordHeader* h = start.emplace_back().mutable_header();
  h->set_epoch(plugin_set_.identity().epoch());
  h->set_unix_nanos(unix_nanos_now());
  h->set_sequence(sequence_ + 1);
  *h->mutable_plugin_set() = plugin_set_;
  for (const auto& [id, state] : sessions_) {
    v1::RecordedSession* session = start.emplace_back().mutable_session();
    session->set_session_id(id);
    *session->mutable_handshake() = state.handshake;
    v1::RecordedCheckpoint* checkpoint =
        start.emplace_back().mutable_checkpoint();
    checkpoint->set_session_id(id);
    *checkpoint->mutable_table() = state.table.checkpoint();
  }
  uint64_t bytes = 8;  // the magic
  for (const v1::RecordEntry& entry : start) bytes += entry.ByteSizeLong() + 10;
  while (!fits_new_file(bytes) && remove_oldest()) {
  }
  if (!fits_new_file(bytes)) {
    fail(fmt::format(
             "--record-max-size ({} bytes) cannot hold a new file's start "
             "({} bytes: the plugin set and every session's node table) "
             "beside what the directory {} itself takes ({} bytes); raise "
             "--record-max-size",
             options_.max_bytes, bytes, options_.dir.string(), dir_usage_),
         /*write_error=*/false);
    return;
  }
  const std::filesystem::path path =
      options_.dir / record_file_name(++sequence_);
  try {
    file_ = std::make_unique<RecordFileWriter>(path);
  } catch (const RecordError& e) {
    fail(e.what(), /*write_error=*/true);
    return;
  }
  file_calls_ = file_flushed_calls_ = unflushed_calls_ = 0;
  {
    std::lock_guard lock(mutex_);
    ++stats_.files;
  }
  for (const v1::RecordEntry& entry : start) {
    if (!put(entry)) return;
  }
  // On disk now: a reader sees the start, and a full disk shows here.
  if (!flush_file()) return;
  if (paused_) {
    spdlog::info(
        "recording: writing again, into {}, after a pause of {} s; {} calls "
        "were left out meanwhile",
        path.string(),
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now() -
                                                         paused_since_)
            .count(),
        left_out_while_paused_);
    paused_ = false;
  }
}

bool CycleRecorder::close_file() {
  if (file_ == nullptr) return true;
  try {
    file_->close();
  } catch (const RecordError& e) {
    fail(e.what(), /*write_error=*/true);
    return false;
  }
  unflushed_calls_ = 0;
  file_flushed_calls_ = file_calls_;
  drop_file();
  return true;
}

void CycleRecorder::drop_file() {
  closed_bytes_ += file_->bytes();
  const std::filesystem::path path = file_->path();
  file_.reset();
  count_bytes();
  const bool replays = file_flushed_calls_ > 0;
  file_calls_ = file_flushed_calls_ = 0;
  if (!replays) {
    // Only its start reached the disk: nothing to replay.
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return;
  }
  // A file cut short by an error replays up to its last whole entry.
  const OnDisk kept{path, record_disk_usage(path)};
  closed_.push_back(kept);
  closed_usage_ += kept.usage;
}

void CycleRecorder::fail(const std::string& error, bool write_error) {
  // Calls the compressor held did not reach the disk: left out, not
  // written (schedplug_record_calls_total counts them when they are).
  const uint64_t lost = unflushed_calls_;
  unflushed_calls_ = 0;
  if (lost > 0) {
    if (metrics_) metrics_->record_dropped(lost);
    std::lock_guard lock(mutex_);
    stats_.calls -= lost;
    stats_.dropped += lost;
  }
  if (file_ != nullptr) {
    try {
      file_->close();
    } catch (const RecordError&) {
      // The error that brought us here is the one to report.
    }
    drop_file();
  }
  if (write_error) {
    if (metrics_) metrics_->record_write_error();
    std::lock_guard lock(mutex_);
    ++stats_.write_errors;
  }
  const auto now = Clock::now();
  backoff_ = paused_ ? std::min(backoff_ * 2, options_.retry_max)
                     : options_.retry_initial;
  retry_at_ = now + backoff_;
  auto seconds = [](auto d) {
    return std::chrono::duration<double>(d).count();
  };
  if (!paused_) {
    paused_ = true;
    paused_since_ = now;
    last_log_ = now;
    left_out_while_paused_ = lost;
    spdlog::error(
        "recording: {}; the recording pauses: calls are left out (counted "
        "in schedplug_record_dropped_calls_total) until a new file {}, "
        "tried in {:g} s and then less often, at least every {:g} s{}",
        error, write_error ? "can be written" : "fits", seconds(backoff_),
        seconds(options_.retry_max),
        write_error ? fmt::format("; free space where --record writes ({}), "
                                  "or lower --record-max-size to what that "
                                  "disk holds",
                                  options_.dir.string())
                    : std::string());
  } else {
    left_out_while_paused_ += lost;
  }
  if (paused_ && now - last_log_ >= kLogEvery) {
    last_log_ = now;
    spdlog::error(
        "recording: still paused after {:.0f} s: {}; {} calls left out so "
        "far; next try in {:g} s (at most one such line every {} minutes)",
        seconds(now - paused_since_), error, left_out_while_paused_,
        seconds(backoff_),
        std::chrono::duration_cast<std::chrono::minutes>(kLogEvery).count());
  }
}

}  // namespace schedplug::host
