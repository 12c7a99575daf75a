// The recorder on disk (host/record/cycle_recorder.hpp): what its files
// and their directory take stays within --record-max-size, the file being
// written included, as the kubelet measures an emptyDir against its
// sizeLimit; a full disk pauses the recording (no file per call, a few log
// lines) until a retry can write again; file names keep their order past
// sequence 999,999. A full disk is RLIMIT_FSIZE here: a write past the
// limit fails with EFBIG from the kernel, as one on a full disk fails with
// ENOSPC, and needs no mount (the tests run unprivileged too).
// The three cases live together: they share the log capture and the lowered
// RLIMIT_FSIZE set up below.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "host/metrics/host_metrics.hpp"
#include "host/record/cycle_recorder.hpp"
#include "host/record/record_file.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

// The host's log lines ("level message") while it lives.
class LogLines {
 public:
  LogLines() : previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("record-test", sink_);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogLines() { spdlog::set_default_logger(previous_); }
  std::vector<std::string> at(spdlog::level::level_enum level) const {
    std::vector<std::string> out;
    for (const auto& [l, line] : sink_->lines())
      if (l == level) out.push_back(line);
    return out;
  }

 private:
  class Sink : public spdlog::sinks::base_sink<std::mutex> {
   public:
    std::vector<std::pair<spdlog::level::level_enum, std::string>> lines() {
      std::lock_guard lock(mutex_);
      return lines_;
    }

   protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
      lines_.emplace_back(msg.level,
                          std::string(msg.payload.data(), msg.payload.size()));
    }
    void flush_() override {}

   private:
    std::vector<std::pair<spdlog::level::level_enum, std::string>> lines_;
  };
  std::shared_ptr<Sink> sink_ = std::make_shared<Sink>();
  std::shared_ptr<spdlog::logger> previous_;
};

// While it lives, a write to a regular file past `bytes` fails with EFBIG
// (RLIMIT_FSIZE, the soft limit; SIGXFSZ, which would end the process, is
// ignored meanwhile). 0: every write to a file fails, as on a full disk.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &saved_), 0);
    previous_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, previous_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  sighandler_t previous_ = SIG_DFL;
};

// What `dir` takes as the kubelet measures an emptyDir (du: allocated
// blocks of the directory and of every file in it), and the files' sizes.
struct OnDisk {
  uint64_t du = 0;
  uint64_t sizes = 0;
  size_t files = 0;
};
OnDisk on_disk(const std::filesystem::path& dir) {
  OnDisk out;
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0)
    out.du += static_cast<uint64_t>(st.st_blocks) * 512;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (::stat(entry.path().c_str(), &st) != 0) continue;
    out.du += static_cast<uint64_t>(st.st_blocks) * 512;
    out.sizes += static_cast<uint64_t>(st.st_size);
    ++out.files;
  }
  return out;
}

// A PreFilter of pod-<i> carrying `payload` bytes that gzip cannot shrink
// much (an annotation of random letters and digits: about 6 bits a byte).
v1::PreFilterRequest request_of(int i, size_t payload, std::mt19937& random) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  v1::PreFilterRequest r;
  r.set_session_id("s");
  r.set_scheduler_name("record-scheduler");
  r.mutable_pod()->set_namespace_("default");
  r.mutable_pod()->set_name("pod-" + std::to_string(i));
  r.mutable_pod()->set_uid("uid-" + std::to_string(i));
  std::string value(payload, ' ');
  for (char& c : value) c = kAlphabet[random() % 64];
  v1::KeyValue* kv = r.mutable_pod()->add_annotations();
  kv->set_key("example.com/noise");
  kv->set_value(std::move(value));
  return r;
}

// A full table of `nodes` nodes at `version`.
v1::NodeTableDelta table_of(uint32_t nodes, uint64_t version) {
  v1::NodeTableDelta d;
  d.set_full(true);
  d.set_new_version(version);
  for (uint32_t slot = 0; slot < nodes; ++slot) {
    v1::Node* n = d.add_upserts();
    n->set_index(slot);
    n->set_name("node-" + std::to_string(slot));
  }
  return d;
}

void call(CycleRecorder& recorder, const v1::PreFilterRequest& request,
          const v1::NodeTableDelta* delta = nullptr,
          uint64_t table_version = 1) {
  recorder.call(v1::RECORDED_METHOD_PRE_FILTER, "s", request,
                v1::PreFilterResponse(), grpc::Status::OK, table_version, 3,
                1ms, delta);
}

// The entries of one file, and whether it ended early.
struct Read {
  std::vector<v1::RecordEntry> entries;
  bool truncated = false;
  int calls = 0;
};
Read read_file(const std::filesystem::path& file) {
  Read out;
  RecordFileReader reader(file);
  for (v1::RecordEntry e; reader.next(e);) {
    out.calls += e.has_call();
    out.entries.push_back(e);
  }
  out.truncated = reader.truncated();
  return out;
}

std::string pod_of(const v1::RecordEntry& e) {
  v1::PreFilterRequest r;
  EXPECT_TRUE(r.ParseFromString(e.call().request()));
  return r.pod().name();
}

// Before writing an entry would take the directory past the cap, the
// recorder removes the oldest files or begins the next one: at no point
// do the files, the one being written included, and the directory take
// more than --record-max-size, counted as du counts them (blocks) and as
// file sizes. (Removing only when a new file began let the total reach
// 1,060,947 bytes under a 1 MiB cap: the kubelet evicts the pod.)
TEST(RecordDisk, TheFilesStayUnderTheCapWithTheOneBeingWritten) {
  TempDir dir;
  RecorderOptions options;
  options.dir = dir.path();
  options.max_bytes = 1 << 20;
  options.file_bytes = 256 << 10;
  constexpr int kCalls = 1500;  // about 3 KiB compressed each: 4.5 MiB
  std::mt19937 random(7);
  OnDisk worst;
  RecorderStats stats;
  {
    CycleRecorder recorder(options, nullptr);
    recorder.session_opened("s", v1::HandshakeRequest());
    const v1::NodeTableDelta table = table_of(3, 1);
    for (int i = 0; i < kCalls; ++i) {
      call(recorder, request_of(i, 4096, random), i == 0 ? &table : nullptr);
      if (i % 10 != 9) continue;
      recorder.flush();
      const OnDisk now = on_disk(dir.path());
      worst.du = std::max(worst.du, now.du);
      worst.sizes = std::max(worst.sizes, now.sizes);
    }
    recorder.flush();
    stats = recorder.stats();
  }
  const OnDisk end = on_disk(dir.path());
  std::printf(
      "[ on disk  ] at most %llu bytes (du), %llu (sizes); at the end "
      "%llu in %zu files; %llu removed\n",
      static_cast<unsigned long long>(worst.du),
      static_cast<unsigned long long>(worst.sizes),
      static_cast<unsigned long long>(end.du), end.files,
      static_cast<unsigned long long>(stats.removed));
  EXPECT_LE(worst.du, options.max_bytes);
  EXPECT_LE(worst.sizes, options.max_bytes);
  EXPECT_LE(end.du, options.max_bytes);
  EXPECT_EQ(stats.calls, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(stats.dropped, 0u);
  EXPECT_GT(stats.removed, 0u);
  // The cap is used, not emptied at each rotation: files of a quarter of
  // it, the oldest removed one at a time.
  EXPECT_GE(end.du, options.max_bytes / 2);

  // What is left is the newest calls, each file whole and beginning with
  // its start (it replays alone), the last call last.
  const auto files = record_files(dir.path());
  ASSERT_GE(files.size(), 2u);
  int calls = 0;
  std::string last;
  for (const auto& file : files) {
    const Read r = read_file(file);
    EXPECT_FALSE(r.truncated) << file;
    ASSERT_FALSE(r.entries.empty()) << file;
    EXPECT_TRUE(r.entries[0].has_header()) << file;
    EXPECT_TRUE(std::any_of(r.entries.begin(), r.entries.end(),
                            [](const auto& e) { return e.has_checkpoint(); }))
        << file;
    calls += r.calls;
    if (!r.entries.empty() && r.entries.back().has_call())
      last = pod_of(r.entries.back());
  }
  EXPECT_EQ(last, "pod-" + std::to_string(kCalls - 1));
  EXPECT_LT(calls, kCalls);
}

// A full disk: the file being written fails, the recording pauses, and the
// calls meanwhile are left out and counted; no file is begun per call (an
// empty one each time, as before), and a few lines are logged, not one per
// call. Once a retry can write, the recording resumes in a new file that
// replays alone (its checkpoint has the table as the calls left it, a
// change made during the pause included).
TEST(RecordDisk, AFullDiskPausesTheRecordingAndARetryResumesIt) {
  TempDir dir;
  LogLines log;
  HostMetrics metrics;
  RecorderOptions options;
  options.dir = dir.path();
  options.max_bytes = 64 << 20;
  options.retry_initial = 200ms;
  options.retry_max = 400ms;
  std::mt19937 random(11);
  CycleRecorder recorder(options, &metrics);
  recorder.session_opened("s", v1::HandshakeRequest());
  const v1::NodeTableDelta table = table_of(3, 1);
  for (int i = 0; i < 20; ++i)
    call(recorder, request_of(i, 512, random), i == 0 ? &table : nullptr);
  recorder.flush();
  ASSERT_EQ(record_files(dir.path()).size(), 1u);
  ASSERT_EQ(recorder.stats().calls, 20u);

  constexpr int kFull = 300;
  const auto full_since = std::chrono::steady_clock::now();
  v1::NodeTableDelta change;  // node-1 becomes node-9, during the pause
  change.set_base_version(1);
  change.set_new_version(2);
  change.add_removed(1);
  v1::Node* n = change.add_upserts();
  n->set_index(1);
  n->set_name("node-9");
  {
    const FileSizeLimit full(0);
    for (int i = 20; i < 20 + kFull; ++i) {
      const bool changes = i == 170;
      call(recorder, request_of(i, 512, random), changes ? &change : nullptr,
           changes ? 2 : 1);
    }
    recorder.flush();
  }
  const auto full_for = std::chrono::steady_clock::now() - full_since;
  const RecorderStats paused = recorder.stats();
  EXPECT_EQ(paused.calls, 20u);
  EXPECT_EQ(paused.dropped, static_cast<uint64_t>(kFull));
  // One failure, then at most one retry per pause (200 ms, then 400 ms).
  EXPECT_GE(paused.write_errors, 1u);
  EXPECT_LE(paused.write_errors, 2 + static_cast<uint64_t>(full_for / 200ms));
  EXPECT_EQ(log.at(spdlog::level::err).size(), 1u)
      << "one line when the recording pauses";
  const std::vector<std::string> errors = log.at(spdlog::level::err);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("File too large"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("the recording pauses"), std::string::npos)
      << errors[0];
  // The file written before the disk filled stays (its calls replay); no
  // other file was left behind, empty or not.
  const auto files = record_files(dir.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(on_disk(dir.path()).files, 1u);
  const Read first = read_file(files[0]);
  EXPECT_EQ(first.calls, 20);

  // Room again: the next call after the pause begins a new file.
  std::this_thread::sleep_for(options.retry_max + 100ms);
  for (int i = 20 + kFull; i < 30 + kFull; ++i)
    call(recorder, request_of(i, 512, random), nullptr, 2);
  recorder.flush();
  const RecorderStats resumed = recorder.stats();
  EXPECT_EQ(resumed.calls, 30u);
  EXPECT_EQ(resumed.dropped, static_cast<uint64_t>(kFull));
  const auto after = record_files(dir.path());
  ASSERT_EQ(after.size(), 2u);
  const Read second = read_file(after[1]);
  EXPECT_FALSE(second.truncated);
  EXPECT_EQ(second.calls, 10);
  bool checkpoint = false;
  for (const v1::RecordEntry& e : second.entries) {
    if (!e.has_checkpoint()) continue;
    checkpoint = true;
    EXPECT_EQ(e.checkpoint().table().new_version(), 2u);
    ASSERT_EQ(e.checkpoint().table().upserts_size(), 3);
    EXPECT_EQ(e.checkpoint().table().upserts(1).name(), "node-9");
  }
  EXPECT_TRUE(checkpoint) << "the new file has no checkpoint";
  const std::vector<std::string> info = log.at(spdlog::level::info);
  EXPECT_TRUE(std::any_of(info.begin(), info.end(), [](const std::string& l) {
    return l.find("recording: writing again") != std::string::npos &&
           l.find("300 calls were left out meanwhile") != std::string::npos;
  })) << "no line says the recording resumed";
  const std::string text = metrics.text();
  EXPECT_NE(text.find("schedplug_record_dropped_calls_total 300"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("schedplug_record_write_errors_total " +
                      std::to_string(resumed.write_errors)),
            std::string::npos)
      << text;
}

// Names keep their order past 999,999 (a wider number), and every reader
// orders by the number, so names of hosts before it (6 digits) and after
// sort together: the recorder continues the numbering and removes the
// oldest first, and replay reads oldest first (record_replay_test.cpp).
TEST(RecordDisk, FilesAreOrderedByTheirNumberPastAMillion) {
  EXPECT_EQ(record_file_name(7), "record-0000000007.sprec.gz");
  EXPECT_EQ(record_file_name(1000000), "record-0001000000.sprec.gz");
  EXPECT_EQ(record_file_sequence("record-999999.sprec.gz"), 999999u);
  EXPECT_EQ(record_file_sequence("record-0001000000.sprec.gz"), 1000000u);
  for (const char* other :
       {"record-.sprec.gz", "record-12a4.sprec.gz", "record-+1.sprec.gz",
        "record-99999999999999999999.sprec.gz", "record-1.sprec",
        "notes-000001.sprec.gz"}) {
    EXPECT_FALSE(record_file_sequence(other).has_value()) << other;
  }

  TempDir dir;
  std::mt19937 random(3);
  // Two files a host wrote before (6 digits), 300 KiB each.
  for (const char* name :
       {"record-999998.sprec.gz", "record-999999.sprec.gz"}) {
    RecordFileWriter writer(dir.path() / name);
    v1::RecordEntry header;
    header.mutable_header()->set_sequence(1);
    writer.write(header);
    for (int i = 0; i < 100; ++i) {
      v1::RecordEntry e;
      e.mutable_call()->set_method(v1::RECORDED_METHOD_PRE_FILTER);
      request_of(i, 4096, random)
          .SerializeToString(e.mutable_call()->mutable_request());
      writer.write(e);
    }
    writer.close();
  }
  std::ofstream(dir.path() / "record-notes.sprec.gz") << "not one of them";
  std::vector<std::string> names;
  for (const auto& f : record_files(dir.path()))
    names.push_back(f.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"record-999998.sprec.gz",
                                             "record-999999.sprec.gz"}));

  RecorderOptions options;
  options.dir = dir.path();
  options.max_bytes = 1 << 20;
  options.file_bytes = 256 << 10;
  {
    CycleRecorder recorder(options, nullptr);
    recorder.session_opened("s", v1::HandshakeRequest());
    const v1::NodeTableDelta table = table_of(3, 1);
    for (int i = 0; i < 400; ++i)
      call(recorder, request_of(i, 4096, random), i == 0 ? &table : nullptr);
    recorder.flush();
    EXPECT_GE(recorder.stats().removed, 2u);
  }
  // The old files went first; what is left is the newest, numbered on.
  std::vector<uint64_t> left;
  for (const auto& f : record_files(dir.path()))
    left.push_back(*record_file_sequence(f.filename().string()));
  ASSERT_FALSE(left.empty());
  EXPECT_GT(left.front(), 999999u);
  for (size_t i = 1; i < left.size(); ++i)
    EXPECT_EQ(left[i], left[i - 1] + 1) << "a newer file was removed";
  EXPECT_EQ(record_file_name(left.back()),
            record_files(dir.path()).back().filename().string());
}

}  // namespace
}  // namespace schedplug::host::testing
