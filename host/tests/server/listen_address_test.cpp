#include "host/security/listen_address.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>

#include "test_support.hpp"

namespace schedplug::host {
namespace {

TEST(ListenAddress, ParsesUnixAndTcpForms) {
  auto a = parse_listen_address("unix:///run/schedplug/host.sock");
  EXPECT_TRUE(a.is_unix);
  EXPECT_EQ(a.socket_path, "/run/schedplug/host.sock");
  EXPECT_EQ(a.grpc_uri, "unix:/run/schedplug/host.sock");
  auto b = parse_listen_address("unix:rel.sock");
  EXPECT_EQ(b.socket_path, "rel.sock");
  auto c = parse_listen_address("127.0.0.1:7000");
  EXPECT_FALSE(c.is_unix);
  EXPECT_EQ(c.grpc_uri, "127.0.0.1:7000");
  EXPECT_THROW(parse_listen_address("nothing"), std::invalid_argument);
  EXPECT_THROW(parse_listen_address("unix://"), std::invalid_argument);
  EXPECT_THROW(parse_listen_address("unix://" + std::string(200, 'x')),
               std::invalid_argument);
}

TEST(ListenAddress, CreatesTheDirectoryAndRemovesAStaleSocket) {
  testing::TempDir dir;
  const auto path = dir.path() / "sub" / "host.sock";
  prepare_unix_socket(path);
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "sub"));

  // A socket file nobody listens on (a host that died).
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  ASSERT_TRUE(std::filesystem::exists(path));
  prepare_unix_socket(path);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ListenAddress, RefusesASocketInUseAndNonSockets) {
  testing::TempDir dir;
  const auto path = dir.path() / "host.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  try {
    prepare_unix_socket(path);
    FAIL() << "accepted a socket in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("already listening"),
              std::string::npos);
  }
  ::close(fd);

  const auto file = dir.path() / "plain";
  std::ofstream(file) << "x";
  EXPECT_THROW(prepare_unix_socket(file), std::runtime_error);
}

}  // namespace
}  // namespace schedplug::host
