#include "http/connection_pool.h"

#include <poll.h>
#include <unistd.h>

namespace tether::http {

using steady = std::chrono::steady_clock;

namespace {

// True when the server has closed the connection (or sent something while
// it was idle, which no exchange can read): either way it is not reusable.
bool readable_now(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  const int n = ::poll(&p, 1, 0);
  return n != 0;  // readable, hung up, or an error
}

}  // namespace

void ssl_free_deleter::operator()(SSL* s) const { SSL_free(s); }
void ssl_session_free_deleter::operator()(SSL_SESSION* s) const { SSL_SESSION_free(s); }

idle_connection::idle_connection(int fd, ip_family family, ssl_ptr tls)
    : fd_(fd), family_(family), tls_(std::move(tls)) {}

idle_connection::~idle_connection() {
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
}

idle_connection::idle_connection(idle_connection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), family_(other.family_), tls_(std::move(other.tls_)), since_(other.since_) {}

idle_connection& idle_connection::operator=(idle_connection&& other) noexcept {
  if (this != &other) {
    tls_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    family_ = other.family_;
    tls_ = std::move(other.tls_);
    since_ = other.since_;
  }
  return *this;
}

int idle_connection::release_fd() { return std::exchange(fd_, -1); }

connection_pool::connection_pool(connection_pool_options options) : options_(options) {}

void connection_pool::expire_locked(steady::time_point now) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    auto& q = it->second;
    while (!q.empty() && now - q.front().since_ >= options_.idle_timeout) {
      q.pop_front();
      --total_;
    }
    it = q.empty() ? idle_.erase(it) : std::next(it);
  }
}

std::optional<idle_connection> connection_pool::acquire(const pool_key& key) {
  std::optional<idle_connection> out;
  std::deque<idle_connection> stale;  // closed after the lock is released
  {
    const std::lock_guard lock(mu_);
    expire_locked(steady::now());
    const auto it = idle_.find(key);
    if (it == idle_.end()) return out;
    auto& q = it->second;
    while (!q.empty()) {
      idle_connection c = std::move(q.back());
      q.pop_back();
      --total_;
      if (readable_now(c.fd())) {
        stale.push_back(std::move(c));
        continue;
      }
      out = std::move(c);
      break;
    }
    if (q.empty()) idle_.erase(it);
  }
  return out;
}

void connection_pool::release(const pool_key& key, idle_connection c) {
  std::deque<idle_connection> closing;
  const auto now = steady::now();
  c.since_ = now;
  {
    const std::lock_guard lock(mu_);
    expire_locked(now);
    if (options_.max_idle_total == 0 || options_.max_idle_per_endpoint == 0) {
      closing.push_back(std::move(c));
    } else {
      auto& q = idle_[key];
      if (q.size() >= options_.max_idle_per_endpoint) {
        closing.push_back(std::move(q.front()));
        q.pop_front();
        --total_;
      }
      q.push_back(std::move(c));
      ++total_;
      while (total_ > options_.max_idle_total) {
        // The oldest idle connection of any endpoint goes first.
        auto oldest = idle_.end();
        for (auto it = idle_.begin(); it != idle_.end(); ++it)
          if (!it->second.empty() && (oldest == idle_.end() || it->second.front().since_ < oldest->second.front().since_))
            oldest = it;
        closing.push_back(std::move(oldest->second.front()));
        oldest->second.pop_front();
        --total_;
        if (oldest->second.empty()) idle_.erase(oldest);
      }
    }
  }
}

// Sessions are kept and handed out as copies: OpenSSL marks a session not
// resumable when a connection using it is freed without a close_notify (as
// an interrupted, failed or evicted one is), and the kept one must survive
// whatever happens to the connections that used it.
void connection_pool::remember_session(const pool_key& key, SSL_SESSION* session) {
  if (session == nullptr || SSL_SESSION_is_resumable(session) == 0) return;
  ssl_session_ptr copy(SSL_SESSION_dup(session));
  if (!copy) return;
  const std::lock_guard lock(mu_);
  sessions_[key] = std::move(copy);
}

ssl_session_ptr connection_pool::session(const pool_key& key) {
  const std::lock_guard lock(mu_);
  const auto it = sessions_.find(key);
  if (it == sessions_.end()) return nullptr;
  return ssl_session_ptr(SSL_SESSION_dup(it->second.get()));
}

std::size_t connection_pool::idle_count() const {
  const std::lock_guard lock(mu_);
  return total_;
}

}  // namespace tether::http
