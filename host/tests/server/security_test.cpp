// Who may talk to the host: socket modes whatever the umask, peer uid
// checks on the unix socket, TCP only with TLS (mutual TLS accepted).
// One file: every case starts a host with one listen and permission set-up and
// connects as someone (another uid in a child process, a TLS client), with the
// mode, uid and test-PKI helpers below.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "host/security/tcp_credentials.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

// An unprivileged uid and gid the tests switch to in a child process
// (Debian's "nobody" / "nogroup"; any unused ids would do, as root).
constexpr uid_t kOtherUid = 65534;
constexpr gid_t kOtherGid = 65534;

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// "unix:///tmp/x/host.sock" -> "/tmp/x/run/host.sock": a socket directory
// the host must create itself.
std::string in_subdirectory(const std::string& listen) {
  const auto path = std::filesystem::path(listen.substr(7));
  return "unix://" + (path.parent_path() / "run" / "host.sock").string();
}

enum class PeerResult { kServed = 0, kClosed = 1, kCannotConnect = 2 };

// Connects to `socket` from a child process running as kOtherUid, sends
// the HTTP/2 client preface and reads: a served connection gets the
// server's SETTINGS frame, a refused one is closed unanswered.
PeerResult connect_as_other_uid(const std::filesystem::path& socket) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls after fork() in a threaded process.
    if (::setgroups(0, nullptr) != 0 || ::setgid(kOtherGid) != 0 ||
        ::setuid(kOtherUid) != 0) {
      ::_exit(3);
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof(addr.sun_path) - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::_exit(2);
    }
    static const char preface[] =
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        "\x00\x00\x00\x04\x00\x00\x00\x00\x00";  // empty SETTINGS frame
    (void)::send(fd, preface, sizeof(preface) - 1, MSG_NOSIGNAL);
    char buffer[64];
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    ::_exit(n > 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  EXPECT_NE(code, 3) << "the test could not switch to uid " << kOtherUid;
  return static_cast<PeerResult>(code);
}

TEST(UnixSocket, OwnerOnlyModesWhateverTheUmask) {
  const mode_t old = ::umask(0);
  RunningHost host(
      [](HostOptions& o) { o.listen = in_subdirectory(o.listen); });
  ::umask(old);
  const auto socket = host.dir() / "run" / "host.sock";
  EXPECT_EQ(mode_of(host.dir() / "run"), 0700u);
  EXPECT_EQ(mode_of(socket), 0600u);
  EXPECT_FALSE(host.handshake().empty());
}

TEST(UnixSocket, GroupModesWithSocketGroup) {
  const mode_t old = ::umask(0);
  RunningHost host([](HostOptions& o) {
    o.listen = in_subdirectory(o.listen);
    o.security.socket_group = std::to_string(kOtherGid);
  });
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((host.dir() / "run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(st.st_gid, kOtherGid);
  ASSERT_EQ(::stat((host.dir() / "run" / "host.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_gid, kOtherGid);
}

TEST(UnixSocket, AnotherUidIsRefusedLoggedAndCounted) {
  // The group lets kOtherUid reach the socket; only the uid check stops it.
  RunningHost host([](HostOptions& o) {
    o.listen = in_subdirectory(o.listen);
    o.security.socket_group = std::to_string(kOtherGid);
  });
  std::filesystem::permissions(
      host.dir(),
      std::filesystem::perms::others_exec | std::filesystem::perms::group_exec,
      std::filesystem::perm_options::add);
  const auto socket = host.dir() / "run" / "host.sock";
  EXPECT_EQ(connect_as_other_uid(socket), PeerResult::kClosed);
  EXPECT_EQ(connect_as_other_uid(socket), PeerResult::kClosed);
  const std::string metrics = host.app().metrics().text();
  EXPECT_NE(metrics.find("schedplug_refused_connections_total 2"),
            std::string::npos)
      << metrics;
  // The host's own uid is still served.
  EXPECT_FALSE(host.handshake().empty());
}

TEST(UnixSocket, AnAllowedUidIsServed) {
  RunningHost host([](HostOptions& o) {
    o.listen = in_subdirectory(o.listen);
    o.security.socket_group = std::to_string(kOtherGid);
    o.security.allowed_uids = {::geteuid(), kOtherUid};
  });
  std::filesystem::permissions(
      host.dir(),
      std::filesystem::perms::others_exec | std::filesystem::perms::group_exec,
      std::filesystem::perm_options::add);
  EXPECT_EQ(connect_as_other_uid(host.dir() / "run" / "host.sock"),
            PeerResult::kServed);
  EXPECT_EQ(
      host.app().metrics().text().find("schedplug_refused_connections_total 1"),
      std::string::npos);
}

// A read-only peer (here this process: --read-only-uid with its own uid,
// --allow-uid another) may ask Status, Explain and the health check, and
// is refused every call of the scheduler, NoteCycles included.
void expect_read_only(RunningHost& host) {
  {
    grpc::ClientContext context;
    v1::HandshakeRequest request;
    request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    v1::HandshakeResponse response;
    const grpc::Status s = host.stub().Handshake(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_NE(
        s.error_message().find("Handshake: uid " + std::to_string(::geteuid()) +
                               " may only read from this host"),
        std::string::npos)
        << s.error_message();
  }
  {
    grpc::ClientContext context;
    v1::PreFilterRequest request;
    v1::PreFilterResponse response;
    EXPECT_EQ(host.stub().PreFilter(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    // What became of cycles is the scheduler's to say.
    grpc::ClientContext context;
    v1::CycleNotes request;
    v1::CycleNotesResponse response;
    EXPECT_EQ(host.stub().NoteCycles(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    grpc::ClientContext context;
    v1::StatusResponse response;
    EXPECT_TRUE(
        host.stub().Status(&context, v1::StatusRequest(), &response).ok());
    EXPECT_GT(response.plugins_size(), 0);
  }
  {
    grpc::ClientContext context;
    v1::ExplainRequest request;
    request.set_pod("default/nobody");
    v1::ExplainResponse response;
    EXPECT_TRUE(host.stub().Explain(&context, request, &response).ok());
  }
  std::ostringstream health;
  EXPECT_EQ(probe_health(host.app().target(), 2s, health), 0) << health.str();
  const std::string metrics = host.app().metrics().text();
  EXPECT_NE(
      metrics.find("schedplug_refused_requests_total{reason=\"read_only\"} 3"),
      std::string::npos)
      << metrics;
}

TEST(UnixSocket, AReadOnlyUidMayReadButNotSchedule) {
  RunningHost host([](HostOptions& o) {
    o.security.allowed_uids = {kOtherUid};
    o.security.read_only_uids = {::geteuid()};
  });
  expect_read_only(host);
}

TEST(UnixSocket, AReadOnlyGroupMayReadButNotSchedule) {
  RunningHost host([](HostOptions& o) {
    o.security.allowed_uids = {kOtherUid};
    o.security.read_only_groups = {std::to_string(::getegid())};
  });
  expect_read_only(host);
}

TEST(UnixSocket, WithoutTheGroupOtherUsersCannotEvenConnect) {
  RunningHost host(
      [](HostOptions& o) { o.listen = in_subdirectory(o.listen); });
  std::filesystem::permissions(
      host.dir(),
      std::filesystem::perms::others_exec | std::filesystem::perms::group_exec,
      std::filesystem::perm_options::add);
  EXPECT_EQ(connect_as_other_uid(host.dir() / "run" / "host.sock"),
            PeerResult::kCannotConnect);
}

TEST(UnixSocket, RefusesAWorldWritableDirectoryItDoesNotOwn) {
  TempDir dir;
  const auto shared = dir.path() / "shared";
  std::filesystem::create_directory(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  ASSERT_EQ(::chown(shared.c_str(), kOtherUid, kOtherGid), 0);
  try {
    RunningHost host([&](HostOptions& o) {
      o.listen = "unix://" + (shared / "host.sock").string();
    });
    FAIL() << "the host served from a world-writable directory";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("0777"), std::string::npos) << what;
    EXPECT_NE(what.find("subdirectory"), std::string::npos) << what;
  }
}

// --- TCP -------------------------------------------------------------------

void run(const std::string& command) {
  ASSERT_EQ(std::system((command + " >/dev/null 2>&1").c_str()), 0) << command;
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A throw-away CA, a server certificate for 127.0.0.1 and a client
// certificate, made with the openssl command for this test only.
struct TestPki {
  explicit TestPki(const std::filesystem::path& where) : dir(where) {
    const std::string d = dir.string();
    const std::string key =
        "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    run("openssl req -x509 " + key + " -keyout " + d + "/ca.key -out " + d +
        "/ca.crt -days 1 -subj /CN=schedplug-test-ca -addext "
        "basicConstraints=critical,CA:TRUE -addext "
        "keyUsage=critical,keyCertSign,cRLSign");
    std::ofstream(dir / "server.ext")
        << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
           "extendedKeyUsage=serverAuth\n";
    std::ofstream(dir / "client.ext") << "extendedKeyUsage=clientAuth\n";
    std::ofstream(dir / "other-client.ext") << "extendedKeyUsage=clientAuth\n";
    for (const char* who : {"server", "client", "other-client"}) {
      const std::string w = d + "/" + who;
      run("openssl req " + key + " -keyout " + w + ".key -out " + w +
          ".csr -subj /CN=schedplug-test-" + who);
      run("openssl x509 -req -in " + w + ".csr -CA " + d + "/ca.crt -CAkey " +
          d + "/ca.key -CAcreateserial -days 1 -out " + w + ".crt -extfile " +
          w + ".ext");
    }
  }
  // A host on a loopback port with this PKI's server certificate, asking
  // clients for a certificate the test CA signed.
  void serve_mutual_tls(HostOptions& o) const {
    o.listen = "127.0.0.1:0";
    o.security.tls_cert = dir / "server.crt";
    o.security.tls_key = dir / "server.key";
    o.security.tls_client_ca = dir / "ca.crt";
  }
  std::filesystem::path dir;
};

std::string handshake_over(const std::string& target,
                           const std::shared_ptr<grpc::ChannelCredentials>& c) {
  auto channel = grpc::CreateChannel(target, c);
  auto stub = v1::Host::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  v1::HandshakeResponse response;
  const grpc::Status status =
      stub->Handshake(&context, test_handshake_request(), &response);
  return status.ok() ? "ok" : status.error_message();
}

TEST(Tcp, PlaintextIsRefusedUnlessAskedForExplicitly) {
  try {
    RunningHost host([](HostOptions& o) { o.listen = "127.0.0.1:0"; });
    FAIL() << "the host served plaintext TCP without --insecure-tcp";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--tls-cert"), std::string::npos) << what;
    EXPECT_NE(what.find("--insecure-tcp"), std::string::npos) << what;
  }
}

// The liveness probe reaches a host serving mutual TLS with the same kind
// of files the shim uses, and says why it cannot without them.
TEST(Tcp, ProbeSpeaksTlsToTheHost) {
  TempDir pki_dir;
  TestPki pki(pki_dir.path());
  RunningHost host([&](HostOptions& o) { pki.serve_mutual_tls(o); });
  const std::string target = host.app().target();
  const ProbeTls with_cert{pki.dir / "ca.crt", pki.dir / "client.crt",
                           pki.dir / "client.key"};
  std::ostringstream ok;
  EXPECT_EQ(probe_health(target, std::chrono::seconds(10), ok, with_cert), 0)
      << ok.str();
  EXPECT_NE(ok.str().find("SERVING"), std::string::npos) << ok.str();

  std::ostringstream plaintext, no_cert, half;
  EXPECT_EQ(probe_health(target, std::chrono::seconds(5), plaintext), 1);
  EXPECT_EQ(probe_health(target, std::chrono::seconds(5), no_cert,
                         ProbeTls{pki.dir / "ca.crt", {}, {}}),
            1);
  EXPECT_EQ(probe_health(target, std::chrono::seconds(5), half,
                         ProbeTls{{}, pki.dir / "client.crt", {}}),
            1);
  EXPECT_NE(half.str().find("--tls-ca"), std::string::npos) << half.str();
}

TEST(Tcp, MutualTlsAcceptsTheClientCertificateOnly) {
  TempDir pki_dir;
  TestPki pki(pki_dir.path());
  RunningHost host([&](HostOptions& o) { pki.serve_mutual_tls(o); });
  const std::string target = host.app().target();

  grpc::SslCredentialsOptions with_cert;
  with_cert.pem_root_certs = read_file(pki.dir / "ca.crt");
  with_cert.pem_private_key = read_file(pki.dir / "client.key");
  with_cert.pem_cert_chain = read_file(pki.dir / "client.crt");
  EXPECT_EQ(handshake_over(target, grpc::SslCredentials(with_cert)), "ok");

  grpc::SslCredentialsOptions no_cert;
  no_cert.pem_root_certs = read_file(pki.dir / "ca.crt");
  EXPECT_NE(handshake_over(target, grpc::SslCredentials(no_cert)), "ok");
  EXPECT_NE(handshake_over(target, grpc::InsecureChannelCredentials()), "ok");
}

// Sessions per peer over TCP: a TLS client certificate is a peer. Another
// client opening many sessions loses its own, never the scheduler's.
TEST(Tcp, SessionsPerPeerAreCountedPerClientCertificate) {
  TempDir pki_dir;
  TestPki pki(pki_dir.path());
  RunningHost host([&](HostOptions& o) {
    pki.serve_mutual_tls(o);
    o.service.max_sessions = 4;
    o.service.max_sessions_per_peer = 2;
  });
  auto client = [&](const std::string& who) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = read_file(pki.dir / "ca.crt");
    tls.pem_private_key = read_file(pki.dir / (who + ".key"));
    tls.pem_cert_chain = read_file(pki.dir / (who + ".crt"));
    return v1::Host::NewStub(
        grpc::CreateChannel(host.app().target(), grpc::SslCredentials(tls)));
  };
  auto handshake = [](v1::Host::Stub& stub) {
    grpc::ClientContext context;
    v1::HandshakeResponse response;
    const grpc::Status s =
        stub.Handshake(&context, test_handshake_request(), &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.session_id();
  };
  const auto scheduler = client("client");
  const auto other = client("other-client");
  const std::string mine = handshake(*scheduler);
  for (int i = 0; i < 6; ++i) handshake(*other);
  const SessionRegistry& sessions = host.app().pipeline().sessions();
  EXPECT_EQ(sessions.sessions_of("TLS client schedplug-test-client"), 1u);
  EXPECT_EQ(sessions.sessions_of("TLS client schedplug-test-other-client"), 2u);
  v1::PreFilterRequest request;
  request.set_session_id(mine);
  request.set_scheduler_name("default-scheduler");
  request.mutable_pod()->set_name("p");
  grpc::ClientContext context;
  v1::PreFilterResponse response;
  const grpc::Status s = scheduler->PreFilter(&context, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST(Tcp, FlagMistakesAreExplained) {
  SecurityOptions only_cert;
  only_cert.tls_cert = "/x.crt";
  EXPECT_THROW(tcp_server_credentials(only_cert, "127.0.0.1:1"),
               std::invalid_argument);
  SecurityOptions missing;
  missing.tls_cert = "/nonexistent/x.crt";
  missing.tls_key = "/nonexistent/x.key";
  try {
    tcp_server_credentials(missing, "127.0.0.1:1");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.key"),
              std::string::npos)
        << e.what();
  }
  SecurityOptions tls_on_unix;
  tls_on_unix.insecure_tcp = true;
  EXPECT_THROW(check_unix_security_flags(tls_on_unix), std::invalid_argument);
  SecurityOptions read_only_on_tcp;
  read_only_on_tcp.read_only_uids = {1000};
  EXPECT_THROW(check_tcp_security_flags(read_only_on_tcp),
               std::invalid_argument);
}

TEST(Metrics, ABarePortMeansLoopback) {
  EXPECT_EQ(metrics_address("9464"), "127.0.0.1:9464");
  EXPECT_EQ(metrics_address(":9464"), "127.0.0.1:9464");
  EXPECT_EQ(metrics_address("0.0.0.0:9464"), "0.0.0.0:9464");
}

// --- Request limits ------------------------------------------------------

TEST(Limits, AFarNodeIndexIsRefusedAndTheNextCallWorks) {
  RunningHost host;
  const std::string session = host.handshake();
  RandomCluster cluster(11);
  cluster.inject_errors = false;
  v1::PreFilterRequest request;
  request.set_session_id(session);
  request.set_scheduler_name("default-scheduler");
  *request.mutable_pod() = cluster.pod();
  v1::NodeTableDelta* delta = request.mutable_delta();
  delta->set_full(true);
  delta->set_new_version(1);
  // One node at index 1,000,000 would make the host allocate a million
  // slots for it.
  *delta->add_upserts() = cluster.node(1000000, "far", 1);
  {
    grpc::ClientContext context;
    v1::PreFilterResponse response;
    const grpc::Status status =
        host.stub().PreFilter(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("is beyond the table"),
              std::string::npos)
        << status.error_message();
  }
  delta->mutable_upserts(0)->set_index(0);
  grpc::ClientContext context;
  v1::PreFilterResponse response;
  const grpc::Status status =
      host.stub().PreFilter(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.table_version(), 1u);
}

}  // namespace
}  // namespace schedplug::host::testing
