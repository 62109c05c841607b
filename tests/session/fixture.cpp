#include "session/fixture.h"

#include <random>

namespace tether::testing {

session_fixture::session_fixture() {
  std::random_device rd;
  dir_ = std::filesystem::temp_directory_path() / ("tether-session-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(dir_);
  work_.emplace(io_.get_executor());
  for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  open_store();
}

session_fixture::~session_fixture() {
  stop_service();
  close_store();
  work_.reset();
  io_.stop();
  for (auto& t : threads_) t.join();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

session::session_options session_fixture::test_options() {
  session::session_options o;
  o.lease_ttl_ms = 30'000;
  o.lease_renew_ms = 20;
  o.recovery_interval_ms = 0;  // scans only when a test asks
  return o;
}

void session_fixture::open_store() {
  store::sqlite_options o;
  o.path = (dir_ / "tether.db").string();
  o.clock = &clock_;
  auto s = store::open_sqlite_store(o);
  ASSERT_TRUE(s) << s.error().describe();
  store_ = std::move(s.value());
}

void session_fixture::close_store() {
  if (store_) store_->stop();
  store_.reset();
}

void session_fixture::make_service(session::session_options opts, std::string node) {
  service_ = std::make_unique<session::session_service>(io_.get_executor(), *store_, runtime_, clock_,
                                                        session::make_node_identity(std::move(node)), opts);
}

void session_fixture::stop_service() {
  if (service_) run(service_->stop());
  service_.reset();
}

session_id session_fixture::new_session() {
  auto r = run(service_->create_session({}));
  EXPECT_TRUE(r) << r.error().describe();
  return r->id;
}

session::admission session_fixture::admit(const session_id& s, std::string prompt, model::delivery d,
                                          session::start_mode m, std::optional<std::string> id) {
  auto r = run(service_->admit(s, {std::move(id), std::move(prompt), d, m}));
  EXPECT_TRUE(r) << r.error().describe();
  return r.value();
}

std::vector<model::event> session_fixture::events(const session_id& s) {
  auto r = run(store_->read(s, event_seq{0}, 100'000));
  EXPECT_TRUE(r) << r.error().describe();
  return r ? r->events : std::vector<model::event>{};
}

std::vector<std::string> session_fixture::types(const session_id& s) {
  std::vector<std::string> out;
  for (const auto& e : events(s)) out.emplace_back(e.type());
  return out;
}

std::size_t session_fixture::count(const session_id& s, std::string_view type) {
  std::size_t n = 0;
  for (const auto& e : events(s)) n += e.type() == type ? 1 : 0;
  return n;
}

}  // namespace tether::testing
