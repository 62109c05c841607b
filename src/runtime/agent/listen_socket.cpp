#include "runtime/agent/listen_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/agent/errors.h"
#include "util/fd.h"

namespace tether::runtime::agent {

namespace fs = std::filesystem;
using local = boost::asio::local::stream_protocol;

namespace {

tether::error fail(agent_errc code, const std::string& what) { return {code, what}; }

// Whether a process accepts connections on the socket at `path` (a stale
// file left by a crash refuses them).
bool someone_listens(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.native().size() + 1);
  const bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return connected;
}

result<void> prepare_directory(const fs::path& dir) {
  if (dir.empty()) return ok();
  std::error_code ec;
  if (fs::exists(dir, ec)) return ok();  // not ours to chmod: it may be shared
  fs::create_directories(dir.parent_path(), ec);
  if (ec) return fail(agent_errc::listen_failed, "cannot create " + dir.parent_path().string() + ": " + ec.message());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail(agent_errc::listen_failed, "cannot create " + dir.string() + ": " + std::strerror(errno));
  }
  return ok();
}

result<void> clear_stale(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return ok();  // nothing there
  if (!S_ISSOCK(st.st_mode)) {
    return fail(agent_errc::not_a_socket,
                path.string() + " exists and is not a socket; remove it or choose another path");
  }
  if (someone_listens(path)) return fail(agent_errc::address_in_use, "another process serves " + path.string());
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return fail(agent_errc::listen_failed,
                "cannot remove the stale socket " + path.string() + ": " + std::strerror(errno));
  }
  return ok();
}

}  // namespace

result<bound_file> listen_at(local::acceptor& acceptor, const fs::path& path) {
  constexpr std::size_t room = sizeof(sockaddr_un::sun_path) - 1;  // the terminating NUL
  if (path.native().size() > room) {
    return fail(agent_errc::socket_path_too_long,
                "the socket path " + path.string() + " is " + std::to_string(path.native().size()) +
                    " bytes; a Unix socket path holds at most " + std::to_string(room));
  }
  if (path.empty()) return fail(agent_errc::listen_failed, "the socket path is empty");
  TETHER_TRY(prepare_directory(path.parent_path()));
  TETHER_TRY(clear_stale(path));

  boost::system::error_code ec;
  const auto failed = [&](const std::string& step) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    return fail(ec == boost::asio::error::address_in_use ? agent_errc::address_in_use : agent_errc::listen_failed,
                step + " " + path.string() + ": " + ec.message());
  };
  acceptor.open(local(), ec);
  if (ec) return failed("cannot open a socket for");
  set_cloexec(acceptor.native_handle());
  // Linux gives the bound file the socket inode's mode (less the umask): no
  // moment with a wider mode than 0600.
  ::fchmod(acceptor.native_handle(), 0600);
  acceptor.bind(local::endpoint(path.string()), ec);
  if (ec) return failed("cannot bind");
  if (::chmod(path.c_str(), 0600) != 0) {
    ec.assign(errno, boost::system::system_category());
    ::unlink(path.c_str());
    return failed("cannot chmod");
  }
  acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) return failed("cannot listen on");
  struct stat st {};
  bound_file f{path};
  if (::stat(path.c_str(), &st) == 0) {
    f.device = st.st_dev;
    f.inode = st.st_ino;
  }
  return f;
}

void remove_bound_file(const bound_file& f) {
  struct stat st {};
  if (f.path.empty() || ::lstat(f.path.c_str(), &st) != 0) return;
  if (st.st_dev == f.device && st.st_ino == f.inode) ::unlink(f.path.c_str());
}

}  // namespace tether::runtime::agent
