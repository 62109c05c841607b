#include "store/postgres/listener.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string_view>

#include <spdlog/spdlog.h>

#include "store/postgres/writer.h"

namespace tether::store::postgres {

namespace {

constexpr int backoff_initial_ms = 100;
constexpr int backoff_max_ms = 5'000;
constexpr std::size_t max_outgoing = 10'000;  // signals queued while disconnected

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

}  // namespace

listener::listener(std::string url, std::string instance, tail_hub& hub)
    : url_(std::move(url)), instance_(std::move(instance)), hub_(hub) {}

listener::~listener() { stop(); }

result<void> listener::connect() {
  auto c = connection::open(url_, store_errc::read_failed);
  if (!c) return c.error();
  if (auto r = (*c)->exec(std::string("LISTEN ") + events_channel + "; LISTEN " + control_channel); !r)
    return r.error();
  db_ = std::move(*c);
  return ok();
}

result<void> listener::start() {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return make_error(store_errc::open_failed, "postgres listener: eventfd failed");
  TETHER_TRY(connect());
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "store-listen");
    loop();
  });
  return ok();
}

void listener::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_thread();
  if (thread_.joinable()) thread_.join();
  db_.reset();
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);
    wake_fd_ = -1;
  }
}

void listener::watch(watcher w) {
  std::lock_guard lock(mu_);
  watcher_ = std::move(w);
}

void listener::signal(const session_id& s, std::string control) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    if (outgoing_.size() >= max_outgoing) outgoing_.pop_front();
    outgoing_.emplace_back(s.str(), std::move(control));
  }
  wake_thread();
}

void listener::wake_thread() {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
}

void listener::deliver(const cluster_signals::foreign_change& c) {
  watcher w;
  {
    std::lock_guard lock(mu_);
    w = watcher_;
  }
  if (w) w(c);
}

void listener::handle(const connection::notification& n) {
  // "<instance> <session> <seq> <wake>" per line (events), or
  // "<instance> <session> <control>" (control).
  for (const auto line : split(n.payload, '\n')) {
    const auto fields = split(line, ' ');
    if (fields.size() < 3 || fields[0] == instance_) continue;
    const auto id = session_id::parse(std::string(fields[1]));
    if (!id) continue;
    cluster_signals::foreign_change c{*id, event_seq{0}, false, {}};
    if (n.channel == control_channel) {
      c.control = std::string(fields[2]);
    } else {
      std::int64_t seq = 0;
      std::from_chars(fields[2].data(), fields[2].data() + fields[2].size(), seq);
      c.seq = event_seq{seq};
      c.wakes = fields.size() > 3 && fields[3] == "1";
      hub_.foreign_commit(c.session, seq);
    }
    deliver(c);
  }
}

void listener::send_signals() {
  std::deque<std::pair<std::string, std::string>> out;
  {
    std::lock_guard lock(mu_);
    out.swap(outgoing_);
  }
  for (const auto& [session, control] : out) {
    const std::string payload = instance_ + " " + session + " " + control;
    if (auto r = db_->run("SELECT pg_notify($1::text, $2::text)", control_channel, payload); !r) {
      spdlog::warn("store: sending {} for {} to the other nodes failed: {}", control, session, r.error().message);
      return;
    }
  }
}

void listener::loop() {
  int backoff = backoff_initial_ms;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (!db_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
      if (auto r = connect(); !r) {
        backoff = std::min(backoff * 2, backoff_max_ms);
        continue;
      }
      backoff = backoff_initial_ms;
      spdlog::info("store: listening to the other nodes again");
      hub_.foreign_resync();
      deliver({session_id{}, event_seq{0}, false, {}});
    }
    send_signals();
    std::array<pollfd, 2> fds{pollfd{db_->socket(), POLLIN, 0}, pollfd{wake_fd_, POLLIN, 0}};
    (void)::poll(fds.data(), fds.size(), 1'000);
    if ((fds[1].revents & POLLIN) != 0) {
      std::uint64_t n = 0;
      (void)::read(wake_fd_, &n, sizeof n);
    }
    auto notes = db_->take_notifications();
    if (!notes) {
      spdlog::warn("store: lost the connection that listens to the other nodes: {}", notes.error().message);
      db_.reset();
      continue;
    }
    for (const auto& n : *notes) handle(n);
  }
}

}  // namespace tether::store::postgres
