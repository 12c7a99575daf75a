// Fuzz target "record": a recording file as `schedplug replay` reads it
// (host/record/): RecordFileReader's magic, gzip stream and length-
// prefixed entries, then every entry as replay uses it, without its
// in-process host: checkpoints, gaps and the deltas of recorded calls into
// each session's TableMirror, and the recorded answers through replay's
// comparison helpers (replay_compare.hpp), which read the indices an
// answer holds (plugins, reasons, node positions).
//
// The first byte says how the rest is read. Even: a recording file as the
// host writes it. Odd: the entries' stream before compression, which the
// target compresses and puts after the magic, so that mutations reach the
// entries instead of only breaking the gzip stream.
//
// Oracles besides crashes, leaks and UB: a delta the mirror refuses leaves
// it as it was, with a reason; one it accepts leaves no slot at or past
// NodeTable::kMaxSlots and a size() that counts the named slots; the
// mirror's checkpoint, applied to an empty mirror, gives the same table;
// rejections name only the answer's rejected nodes; the best nodes are
// among the answer's nodes, and a plugin's normalized scores are as many
// as it sent.
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/message_differencer.h>

#include "fuzz/fuzz_checks.hpp"
#include "host/record/record_file.hpp"
#include "host/record/replay_compare.hpp"
#include "host/record/table_mirror.hpp"
#include "host/table/node_table.hpp"
#include "schedplug/v1/record.pb.h"

namespace {

namespace host = schedplug::host;
namespace replay = schedplug::host::replay;
namespace v1 = schedplug::v1;
using google::protobuf::util::MessageDifferencer;

// A recording file's first 8 bytes (record_file.cpp).
constexpr char kMagic[8] = {
    'S', 'P',  'R',  'E',
    'C', '\0', '\0', static_cast<char>(host::kRecordFormatVersion)};
// Entries read from one input at most (a gzip stream can hold many).
constexpr int kMaxEntries = 4096;
// Weights of a profile's score plugins: 1, large and negative ones too,
// so that weighted sums reach the int64 bounds.
const std::vector<int> kWeights = {1, 3, 1 << 30, -7, -(1 << 30)};

// A file holding `bytes`, without touching the disk.
class MemoryFile {
 public:
  explicit MemoryFile(const std::string& bytes)
      : fd_(::memfd_create("record-fuzz", MFD_CLOEXEC)) {
    SCHEDPLUG_FUZZ_CHECK(fd_ >= 0, "memfd_create failed");
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      SCHEDPLUG_FUZZ_CHECK(n > 0, "write to the memfd failed");
      done += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::filesystem::path path() const {
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

std::string compressed(const uint8_t* data, size_t size) {
  std::string out(kMagic, sizeof kMagic);
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::GzipOutputStream::Options options;
    options.format = google::protobuf::io::GzipOutputStream::GZIP;
    google::protobuf::io::GzipOutputStream gzip(&raw, options);
    void* buffer;
    int room;
    size_t done = 0;
    while (done < size && gzip.Next(&buffer, &room)) {
      const size_t n = std::min(size - done, static_cast<size_t>(room));
      std::memcpy(buffer, data + done, n);
      done += n;
      if (n < static_cast<size_t>(room))
        gzip.BackUp(room - static_cast<int>(n));
    }
    gzip.Close();
  }
  return out;
}

size_t named_slots(const host::TableMirror& mirror) {
  size_t n = 0;
  for (size_t slot = 0; slot < mirror.slot_count(); ++slot)
    n += !mirror.name(static_cast<uint32_t>(slot)).empty();
  return n;
}

void apply(host::TableMirror& mirror, const v1::NodeTableDelta& delta) {
  const v1::NodeTableDelta before = mirror.checkpoint();
  const size_t slots = mirror.slot_count();
  v1::NodeTableDelta copy = delta;
  std::string error;
  if (!mirror.apply(copy, &error)) {
    SCHEDPLUG_FUZZ_CHECK(!error.empty(), "a refusal without a reason");
    SCHEDPLUG_FUZZ_CHECK(MessageDifferencer::Equals(copy, delta),
                         "a refused delta was changed");
    SCHEDPLUG_FUZZ_CHECK(mirror.slot_count() == slots,
                         "a refused delta moved the slots");
    SCHEDPLUG_FUZZ_CHECK(
        MessageDifferencer::Equals(mirror.checkpoint(), before),
        "a refused delta changed the table");
    return;
  }
  SCHEDPLUG_FUZZ_CHECK(mirror.slot_count() <= host::NodeTable::kMaxSlots,
                       "a slot past kMaxSlots");
  SCHEDPLUG_FUZZ_CHECK(mirror.size() == named_slots(mirror),
                       "size() is not the named slots' count");
  const v1::NodeTableDelta checkpoint = mirror.checkpoint();
  SCHEDPLUG_FUZZ_CHECK(
      checkpoint.upserts_size() == static_cast<int>(mirror.size()),
      "the checkpoint does not hold every node");
  host::TableMirror again;
  v1::NodeTableDelta restore = checkpoint;
  SCHEDPLUG_FUZZ_CHECK(again.apply(restore, &error),
                       "a checkpoint of the mirror is refused: " + error);
  SCHEDPLUG_FUZZ_CHECK(
      MessageDifferencer::Equals(again.checkpoint(), checkpoint),
      "a checkpoint does not give back the same table");
}

// As replay: a delta moved the recorded table when it changes something
// and the call left the table at its version.
bool moved(const v1::NodeTableDelta& d, const v1::RecordedCall& c) {
  return (d.full() || d.upserts_size() > 0 || d.removed_size() > 0) &&
         d.new_version() == c.table_version();
}

void check_scores(
    const host::TableMirror& mirror,
    const google::protobuf::RepeatedPtrField<v1::PluginScores>& plugins,
    const google::protobuf::RepeatedField<uint32_t>& nodes) {
  for (const v1::PluginScores& p : plugins) {
    const std::vector<int64_t> values = replay::normalized(p);
    SCHEDPLUG_FUZZ_CHECK(
        values.size() ==
            static_cast<size_t>(p.scores_size() > 0 ||
                                        p.normalization() ==
                                            v1::NORMALIZATION_BY_PLUGIN
                                    ? p.scores_size()
                                    : p.raw_size()),
        "normalized scores are not as many as the plugin sent");
  }
  const replay::Best best = replay::best_nodes(plugins, nodes, kWeights);
  for (uint32_t slot : best.slots) {
    SCHEDPLUG_FUZZ_CHECK(
        std::find(nodes.begin(), nodes.end(), slot) != nodes.end(),
        "a best node that is not among the answer's nodes");
    (void)mirror.name(slot);
  }
  (void)replay::score_failure(plugins);
}

void check_filters(const host::TableMirror& mirror,
                   const v1::PreFilterResponse& r) {
  for (const auto& [slot, verdict] : replay::rejections(r)) {
    SCHEDPLUG_FUZZ_CHECK(
        std::find(r.rejected_nodes().begin(), r.rejected_nodes().end(), slot) !=
            r.rejected_nodes().end(),
        "a rejection of a node the answer did not reject");
    (void)replay::describe(verdict);
    (void)mirror.name(slot);
  }
  (void)replay::filter_failure(r);
  if (r.has_scores_ahead())
    check_scores(mirror, r.scores_ahead().plugins(), r.scores_ahead().nodes());
}

// A hook call's recorded answer, as replay reads it to compare.
template <class Response>
void hook_answer(const v1::RecordedCall& c) {
  Response response;
  if (response.ParseFromString(c.response()))
    (void)host::replay::hook_answer(response);
}

void call(std::map<std::string, host::TableMirror>& sessions,
          const v1::RecordedCall& c) {
  switch (c.method()) {
    case v1::RECORDED_METHOD_PRE_FILTER: {
      v1::PreFilterRequest request;
      if (!request.ParseFromString(c.request())) return;
      host::TableMirror& mirror = sessions[request.session_id()];
      if (request.has_delta() && moved(request.delta(), c))
        apply(mirror, request.delta());
      v1::PreFilterResponse response;
      if (response.ParseFromString(c.response()))
        check_filters(mirror, response);
      return;
    }
    case v1::RECORDED_METHOD_FILTER_NODES: {
      v1::FilterNodesRequest request;
      if (!request.ParseFromString(c.request())) return;
      v1::PreFilterResponse response;
      if (response.ParseFromString(c.response()))
        check_filters(sessions[request.session_id()], response);
      return;
    }
    case v1::RECORDED_METHOD_FILTER: {
      v1::FilterRequest request;
      v1::FilterResponse response;
      (void)request.ParseFromString(c.request());
      (void)response.ParseFromString(c.response());
      return;
    }
    case v1::RECORDED_METHOD_PRE_SCORE: {
      v1::PreScoreRequest request;
      if (!request.ParseFromString(c.request())) return;
      host::TableMirror& mirror = sessions[request.session_id()];
      if (request.has_delta() && moved(request.delta(), c))
        apply(mirror, request.delta());
      v1::PreScoreResponse response;
      if (response.ParseFromString(c.response()))
        check_scores(mirror, response.plugins(), request.nodes());
      return;
    }
    case v1::RECORDED_METHOD_RESERVE:
      hook_answer<v1::ReserveResponse>(c);
      return;
    case v1::RECORDED_METHOD_UNRESERVE:
      hook_answer<v1::UnreserveResponse>(c);
      return;
    case v1::RECORDED_METHOD_PERMIT:
      hook_answer<v1::PermitResponse>(c);
      return;
    case v1::RECORDED_METHOD_PRE_BIND:
      hook_answer<v1::PreBindResponse>(c);
      return;
    case v1::RECORDED_METHOD_PRE_ENQUEUE:
      hook_answer<v1::PreEnqueueResponse>(c);
      return;
    default:
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    // Protobuf logs every string that is not UTF-8; a fuzzer makes many.
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  if (size == 0) return 0;
  const std::string bytes =
      data[0] % 2 == 0
          ? std::string(reinterpret_cast<const char*>(data + 1), size - 1)
          : compressed(data + 1, size - 1);
  const MemoryFile file(bytes);
  std::unique_ptr<host::RecordFileReader> reader;
  try {
    reader = std::make_unique<host::RecordFileReader>(file.path());
  } catch (const host::RecordError& e) {
    SCHEDPLUG_FUZZ_CHECK(
        std::string(e.what()).find("/proc/self/fd/") != std::string::npos,
        "a RecordError that does not name the file");
    return 0;
  }
  std::map<std::string, host::TableMirror> sessions;
  v1::RecordEntry entry;
  for (int n = 0; n < kMaxEntries && reader->next(entry); ++n) {
    switch (entry.entry_case()) {
      case v1::RecordEntry::kSession:
        (void)sessions[entry.session().session_id()];
        break;
      case v1::RecordEntry::kCheckpoint:
        apply(sessions[entry.checkpoint().session_id()],
              entry.checkpoint().table());
        break;
      case v1::RecordEntry::kGap:
        for (const v1::NodeTableDelta& d : entry.gap().deltas())
          apply(sessions[entry.gap().session_id()], d);
        break;
      case v1::RecordEntry::kCall:
        call(sessions, entry.call());
        break;
      default:
        break;
    }
  }
  return 0;
}
