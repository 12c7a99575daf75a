#include "host/record/cycle_recorder.hpp"

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

// The sequence number in a recording file's name (0: not one).
uint64_t sequence_of(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  const size_t prefix = std::char_traits<char>::length(kRecordFilePrefix);
  try {
    return std::stoull(name.substr(prefix));
  } catch (const std::exception&) {
    return 0;
  }
}

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
    : options_(std::move(options)), metrics_(metrics) {
  std::error_code ec;
  if (!std::filesystem::is_directory(options_.dir, ec)) {
    throw RecordError(fmt::format(
        "--record {}: not a directory; create it (writable by the host) or "
        "give another",
        options_.dir.string()));
  }
  for (const auto& file : record_files(options_.dir))
    sequence_ = std::max(sequence_, sequence_of(file));
  last_flush_ = std::chrono::steady_clock::now();
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
    const auto now = std::chrono::steady_clock::now();
    if (file_ && (flush_now || stopping ||
                  now - last_flush_ >= options_.flush_interval)) {
      try {
        file_->flush();
      } catch (const RecordError& e) {
        spdlog::error("{}", e.what());
        close_file();
      }
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
      if (file_) write(item.entry);
      return;
    case Item::Kind::kSessionOpened: {
      SessionState& s = sessions_[item.session_id];
      s = SessionState{};
      s.handshake = item.entry.session().handshake();
      if (file_) write(item.entry);
      return;
    }
    case Item::Kind::kSessionClosed:
      sessions_.erase(item.session_id);
      return;
    case Item::Kind::kGap: {
      v1::RecordEntry entry;
      v1::RecordedGap* gap = entry.mutable_gap();
      gap->set_session_id(item.session_id);
      gap->set_calls(1);
      *gap->add_deltas() = item.delta;
      if (file_ == nullptr) open_file();
      write(entry);
      follow_delta(item.session_id, item.delta);
      std::lock_guard lock(mutex_);
      ++stats_.dropped;
      if (metrics_) metrics_->record_dropped(1);
      return;
    }
    case Item::Kind::kCall: {
      if (file_ == nullptr || file_->bytes() >= options_.file_bytes) {
        close_file();
        open_file();
      }
      write(item.entry);
      if (item.has_delta) follow_delta(item.session_id, item.delta);
      std::lock_guard lock(mutex_);
      ++stats_.calls;
      return;
    }
    case Item::Kind::kFlush:
      return;
  }
}

void CycleRecorder::follow_delta(const std::string& session_id,
                                 v1::NodeTableDelta& delta) {
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return;  // opened before the recorder saw it
  it->second.table.apply(delta);
}

void CycleRecorder::write(const v1::RecordEntry& entry) {
  if (file_ == nullptr) return;
  try {
    file_->write(entry);
    // Bounds what the file's size does not show yet, so that files
    // rotate near file_bytes (a flush costs the compressor a little).
    if (file_->unflushed() >=
        std::min<uint64_t>(uint64_t{1} << 20, options_.file_bytes / 4))
      file_->flush();
  } catch (const RecordError& e) {
    spdlog::error("{}", e.what());
    close_file();  // the next call begins a new file
  }
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

void CycleRecorder::open_file() {
  const std::filesystem::path path =
      options_.dir / record_file_name(++sequence_);
  try {
    file_ = std::make_unique<RecordFileWriter>(path);
  } catch (const RecordError& e) {
    spdlog::error("{}", e.what());
    return;
  }
  {
    std::lock_guard lock(mutex_);
    ++stats_.files;
  }
  v1::RecordEntry header;
  v1::RecordHeader* h = header.mutable_header();
  h->set_epoch(plugin_set_.identity().epoch());
  h->set_unix_nanos(unix_nanos_now());
  h->set_sequence(sequence_);
  *h->mutable_plugin_set() = plugin_set_;
  write(header);
  for (const auto& [id, state] : sessions_) {
    v1::RecordEntry session;
    session.mutable_session()->set_session_id(id);
    *session.mutable_session()->mutable_handshake() = state.handshake;
    write(session);
    v1::RecordEntry checkpoint;
    checkpoint.mutable_checkpoint()->set_session_id(id);
    *checkpoint.mutable_checkpoint()->mutable_table() =
        state.table.checkpoint();
    write(checkpoint);
  }
  remove_old_files();
}

void CycleRecorder::close_file() {
  if (file_ == nullptr) return;
  try {
    file_->close();
  } catch (const RecordError& e) {
    spdlog::error("{}", e.what());
  }
  closed_bytes_ += file_->bytes();
  file_.reset();
  count_bytes();
}

void CycleRecorder::remove_old_files() {
  std::vector<std::filesystem::path> files;
  try {
    files = record_files(options_.dir);
  } catch (const RecordError& e) {
    spdlog::warn("{}", e.what());
    return;
  }
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  for (const auto& f : files) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(f, ec);
    sizes.push_back(ec ? 0 : size);
    total += sizes.back();
  }
  for (size_t i = 0; i + 1 < files.size() && total > options_.max_bytes; ++i) {
    if (file_ && files[i] == file_->path()) continue;
    std::error_code ec;
    if (!std::filesystem::remove(files[i], ec)) continue;
    total -= sizes[i];
    spdlog::info("recording: removed {} to stay under --record-max-size",
                 files[i].string());
    if (metrics_) metrics_->record_file_removed();
    std::lock_guard lock(mutex_);
    ++stats_.removed;
  }
}

}  // namespace schedplug::host
