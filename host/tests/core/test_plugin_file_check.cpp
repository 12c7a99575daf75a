// Checks before dlopen: a plugin file or directory others can write (or
// someone else owns) is refused with a message saying what to change; a
// ConfigMap volume's layout passes; a pinned SHA-256 mismatch is refused
// before the library's constructor runs.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "corpus_path.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "host/loader/plugin_library.hpp"

namespace schedplug::host {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/schedplug-files-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp");
    path_ = pattern;
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

fs::path security_file(const std::string& stem) {
  return fs::path(SCHEDPLUG_SECURITY_DIR) / (stem + ".so");
}

// Copies a built plugin into `dir` with `mode` (set explicitly).
fs::path install(const fs::path& source, const fs::path& dir, mode_t mode) {
  const fs::path target = dir / source.filename();
  fs::copy_file(source, target, fs::copy_options::overwrite_existing);
  EXPECT_EQ(::chmod(target.c_str(), mode), 0);
  return target;
}

std::string load_error(const fs::path& file) {
  try {
    load_plugin_file(file);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "(loaded)";
}

// Resets the process-wide policy after each test.
class PluginFileCheck : public ::testing::Test {
 protected:
  void TearDown() override { plugin_file_policy() = PluginFilePolicy{}; }
};

TEST_F(PluginFileCheck, WorldWritablePluginIsRefusedWithWhatToChange) {
  TempDir dir;
  const auto file =
      install(testing::corpus_file("good_filter"), dir.path(), 0666);
  EXPECT_THAT(
      load_error(file),
      AllOf(HasSubstr(file.string()), HasSubstr("refused before loading"),
            HasSubstr("owned by uid 0 (root)"), HasSubstr("mode 0666"),
            HasSubstr("chmod go-w " + file.string())));
  ::chmod(file.c_str(), 0644);
  EXPECT_EQ(load_error(file), "(loaded)");
}

TEST_F(PluginFileCheck, GroupWritableDirectoryIsRefused) {
  TempDir dir;
  const auto file =
      install(testing::corpus_file("good_filter"), dir.path(), 0644);
  ::chmod(dir.path().c_str(), 0775);
  EXPECT_THAT(load_error(file),
              AllOf(HasSubstr("the plugin directory " + dir.path().string()),
                    HasSubstr("mode 0775"),
                    HasSubstr("chmod go-w " + dir.path().string())));
  // The directory listing reports it per file, beside the others.
  const LoadResult result = load_plugin_directory(dir.path());
  EXPECT_TRUE(result.plugins.empty());
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_THAT(result.problems[0].message, HasSubstr("mode 0775"));
}

TEST_F(PluginFileCheck, ADirectoryAboveThePluginDirectoryCounts) {
  // Whoever may write a directory above --plugins may swap what is below.
  TempDir dir;
  const fs::path above = dir.path() / "shared";
  const fs::path plugins = above / "plugins";
  fs::create_directories(plugins);
  ::chmod(above.c_str(), 0777);
  ::chmod(plugins.c_str(), 0755);
  const auto file = install(testing::corpus_file("good_filter"), plugins, 0644);
  EXPECT_THAT(
      load_error(file),
      AllOf(HasSubstr("the directory " + above.string()),
            HasSubstr("mode 0777"), HasSubstr("chmod go-w " + above.string())));
  // A sticky directory the host's user or root owns (as /tmp) is fine:
  // others cannot rename what they do not own in it.
  ::chmod(above.c_str(), 01777);
  EXPECT_EQ(load_error(file), "(loaded)");
}

TEST_F(PluginFileCheck, APathSwappedAfterTheCheckLoadsTheCheckedFile) {
  TempDir dir;
  const fs::path plugins = dir.path() / "plugins";
  const fs::path other = dir.path() / "other";
  for (const fs::path& d : {plugins, other}) {
    fs::create_directory(d);
    ::chmod(d.c_str(), 0755);
  }
  const auto file = install(testing::corpus_file("good_filter"), plugins, 0644);
  // Another plugin under the same file name, swapped in between the checks
  // (and the pinned digest) and dlopen by someone who can write dir.
  fs::copy_file(testing::corpus_file("good_scorer"), other / "good_filter.so");
  ::chmod((other / "good_filter.so").c_str(), 0644);
  const std::string checked_digest = file_sha256(file);
  plugin_file_policy().name_pins["GoodFilter"] = checked_digest;
  plugin_file_policy().pins = PluginPins{
      .source = "pins.txt", .sha256 = {{"good_filter.so", checked_digest}}};
  plugin_file_policy().before_dlopen = [&](const fs::path&) {
    fs::rename(plugins, dir.path() / "checked");
    fs::rename(other, plugins);
  };
  std::shared_ptr<PluginLibrary> library;
  ASSERT_NO_THROW(library = load_plugin_file(file));
  EXPECT_EQ(library->name(), "GoodFilter")
      << "the file checked and hashed is the file loaded";
  EXPECT_EQ(library->sha256(), checked_digest);
  EXPECT_EQ(library->file(), file);
}

TEST_F(PluginFileCheck, FileOwnedBySomeoneElseIsRefused) {
  TempDir dir;
  const auto file =
      install(testing::corpus_file("good_filter"), dir.path(), 0644);
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  EXPECT_THAT(load_error(file),
              AllOf(HasSubstr("owned by uid 65534"),
                    HasSubstr("must belong to root or to the host's own user"),
                    HasSubstr("chown root " + file.string())));
}

// kubelet's layout of a ConfigMap volume: each key is a symlink into
// ..data, itself a symlink to a timestamped directory; files root-owned
// with the volume's defaultMode.
fs::path make_configmap_volume(const fs::path& root, mode_t mode) {
  const fs::path stamp = root / "..2026_11_30_05_00_00.123456789";
  fs::create_directory(stamp);
  ::chmod(stamp.c_str(), 0755);
  install(testing::corpus_file("good_filter"), stamp, mode);
  fs::create_directory_symlink(stamp.filename(), root / "..data");
  fs::create_symlink(fs::path("..data") / "good_filter.so",
                     root / "good_filter.so");
  return root / "good_filter.so";
}

TEST_F(PluginFileCheck, ConfigMapVolumeLayoutPasses) {
  TempDir dir;
  const auto file = make_configmap_volume(dir.path(), 0644);
  const LoadResult result = load_plugin_directory(dir.path());
  ASSERT_EQ(result.problems.size(), 0u) << result.problems[0].message;
  ASSERT_EQ(result.plugins.size(), 1u);
  EXPECT_EQ(result.plugins[0]->name(), "GoodFilter");
  EXPECT_EQ(result.plugins[0]->file(), file);
}

TEST_F(PluginFileCheck, ConfigMapLayoutWithAWritableFileBehindDataIsRefused) {
  TempDir dir;
  const auto file = make_configmap_volume(dir.path(), 0666);
  // The message names the real file behind the ..data symlink.
  EXPECT_THAT(load_error(file),
              AllOf(HasSubstr("..2026_11_30_05_00_00.123456789/good_filter.so"),
                    HasSubstr("0666")));
}

// kubelet makes a ConfigMap volume's top directory 0777 and mounts it
// read-only into the container: a read-only mount cannot be written, so
// it passes. The test bind-mounts the directory read-only in a private
// mount namespace of a child process (the test runs as root).
TEST_F(PluginFileCheck, WritableBitsOnAReadOnlyMountPass) {
  TempDir dir;
  make_configmap_volume(dir.path(), 0644);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  EXPECT_THAT(load_error(dir.path() / "good_filter.so"), HasSubstr("0777"));

  const pid_t pid = ::fork();
  if (pid == 0) {
    const char* d = dir.path().c_str();
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(d, d, nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, d, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY,
                nullptr) != 0) {
      ::_exit(3);
    }
    const LoadResult result = load_plugin_directory(dir.path());
    ::_exit(result.problems.empty() && result.plugins.size() == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 3)
      << "could not bind-mount read-only (the test needs root)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(PluginFileCheck, ReadsSha256sumOutput) {
  TempDir dir;
  const auto list = dir.path() / "plugins.sha256";
  const std::string a(64, 'a');
  const std::string b(64, 'B');
  std::ofstream(list) << "# pinned plugins\n"
                      << a << "  hw_encrypt.so\n"
                      << b << " *build/plugins.d/other.so\n\n";
  const PluginPins pins = read_plugin_pins(list);
  EXPECT_EQ(pins.sha256.at("hw_encrypt.so"), a);
  EXPECT_EQ(pins.sha256.at("other.so"), std::string(64, 'b'));

  std::ofstream(list) << "xyz  hw_encrypt.so\n";
  try {
    read_plugin_pins(list);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr(list.string() + ":1"), HasSubstr("sha256sum")));
  }
}

TEST_F(PluginFileCheck, Sha256MatchesSha256sum) {
  TempDir dir;
  const auto out = dir.path() / "sum";
  const auto file = security_file("ctor_marker");
  ASSERT_EQ(
      std::system(("sha256sum '" + file.string() + "' > '" + out.string() + "'")
                      .c_str()),
      0);
  std::ifstream in(out);
  std::string expected;
  in >> expected;
  EXPECT_EQ(file_sha256(file), expected);
}

TEST_F(PluginFileCheck, PinMismatchIsRefusedBeforeTheConstructorRuns) {
  TempDir dir;
  const auto file = install(security_file("ctor_marker"), dir.path(), 0644);
  const auto marker = dir.path() / "constructor-ran";
  ::setenv("SCHEDPLUG_TEST_MARKER", marker.c_str(), 1);

  PluginPins pins;
  pins.source = dir.path() / "plugins.sha256";
  pins.sha256["ctor_marker.so"] = std::string(64, '0');
  plugin_file_policy().pins = pins;
  EXPECT_THAT(load_error(file),
              AllOf(HasSubstr("refused before loading"),
                    HasSubstr("its SHA-256 is " + file_sha256(file)),
                    HasSubstr("pins " + std::string(64, '0')),
                    HasSubstr("plugins.sha256 (--plugin-sha256)")));
  EXPECT_FALSE(fs::exists(marker));

  pins.sha256.clear();
  plugin_file_policy().pins = pins;
  EXPECT_THAT(load_error(file), HasSubstr("not listed in"));
  EXPECT_FALSE(fs::exists(marker));

  // The right digest loads it, and the constructor leaves its marker.
  pins.sha256["ctor_marker.so"] = file_sha256(file);
  plugin_file_policy().pins = pins;
  EXPECT_EQ(load_error(file), "(loaded)");
  EXPECT_TRUE(fs::exists(marker));
  ::unsetenv("SCHEDPLUG_TEST_MARKER");
}

// args.schedplug.sha256 in the config pins a plugin by name. The host
// learns a file's plugin name only by loading it, so before dlopen a file
// must match one of the pinned digests.
TEST_F(PluginFileCheck, ConfigPinMismatchIsRefusedBeforeTheConstructorRuns) {
  TempDir dir;
  const auto file = install(security_file("ctor_marker"), dir.path(), 0644);
  const auto marker = dir.path() / "constructor-ran";
  ::setenv("SCHEDPLUG_TEST_MARKER", marker.c_str(), 1);

  plugin_file_policy().name_pins["CtorMarker"] = std::string(64, '0');
  plugin_file_policy().name_pins_source = "/etc/schedplug/config.yaml";
  EXPECT_THAT(
      load_error(file),
      AllOf(HasSubstr("refused before loading: its SHA-256 is " +
                      file_sha256(file)),
            HasSubstr("matches none of the args.schedplug.sha256 pins in "
                      "/etc/schedplug/config.yaml (pinned: CtorMarker)")));
  EXPECT_FALSE(fs::exists(marker));

  // The right digest loads it, and the constructor leaves its marker.
  plugin_file_policy().name_pins["CtorMarker"] = file_sha256(file);
  EXPECT_EQ(load_error(file), "(loaded)");
  EXPECT_TRUE(fs::exists(marker));
  ::unsetenv("SCHEDPLUG_TEST_MARKER");
}

// A file another pin lets through (here the --plugin-sha256 list) is
// opened, and refused once its name shows the config pins another digest.
TEST_F(PluginFileCheck, ConfigPinIsCheckedAgainstTheLoadedName) {
  TempDir dir;
  const auto file = install(security_file("ctor_marker"), dir.path(), 0644);
  PluginPins pins;
  pins.source = dir.path() / "plugins.sha256";
  pins.sha256["ctor_marker.so"] = file_sha256(file);
  plugin_file_policy().pins = pins;
  plugin_file_policy().name_pins["CtorMarker"] = std::string(64, 'b');
  plugin_file_policy().name_pins_source = "config.yaml";
  EXPECT_THAT(load_error(file),
              AllOf(HasSubstr("it holds plugin \"CtorMarker\""),
                    HasSubstr("args.schedplug.sha256 of \"CtorMarker\" in "
                              "config.yaml pins " +
                              std::string(64, 'b'))));
}

// The pin list is the bundle's inventory: a listed file that is missing is
// a problem naming it, and the files that are there still load.
TEST_F(PluginFileCheck, AFileThePinListNamesButTheDirectoryLacksIsAProblem) {
  TempDir dir;
  const auto file = install(security_file("ctor_marker"), dir.path(), 0644);
  PluginPins pins;
  pins.source = dir.path() / "SHA256SUMS";
  pins.sha256["ctor_marker.so"] = file_sha256(file);
  pins.sha256["gone.so"] = std::string(64, 'c');
  plugin_file_policy().pins = pins;
  const LoadResult result = load_plugin_directory(dir.path());
  EXPECT_EQ(result.plugins.size(), 1u);
  ASSERT_EQ(result.problems.size(), 1u);
  EXPECT_EQ(result.problems[0].file, dir.path() / "gone.so");
  EXPECT_THAT(result.problems[0].message,
              AllOf(HasSubstr("gone.so"), HasSubstr("SHA256SUMS"),
                    HasSubstr("not in the plugin directory"),
                    HasSubstr("schedplug bundle")));
}

}  // namespace
}  // namespace schedplug::host
