#include "fixture.h"

#include <random>

#include "store/sqlite/sqlite_store.h"

namespace tether::testing {

native_fixture::native_fixture() {
  std::random_device rd;
  dir_ = std::filesystem::temp_directory_path() / ("tether-native-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(dir_);
  auto started = mock_.start();
  EXPECT_TRUE(started) << started.error().describe();
  work_.emplace(io_.get_executor());
  for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });

  options_.provider.api = GetParam();
  options_.provider.base_url = mock_.base_url() + "/v1";
  options_.provider.model = "scripted";
  options_.provider.api_key = "test-key";
  options_.data_dir = dir_;
  options_.retry.base = std::chrono::milliseconds(1);
  options_.retry.max_wait = std::chrono::milliseconds(20);
}

native_fixture::~native_fixture() {
  if (service_) run(service_->stop());
  service_.reset();
  if (store_) store_->stop();
  work_.reset();
  io_.stop();
  for (auto& t : threads_) t.join();
  runtime_.reset();
  store_.reset();
  mock_.stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void native_fixture::start() {
  store::sqlite_options so;
  so.path = (dir_ / "tether.db").string();
  auto st = store::open_sqlite_store(so);
  ASSERT_TRUE(st) << st.error().describe();
  store_ = std::move(st.value());
  runtime_ = runtime::native::make_native_runtime(options_);
  session::session_options o;
  o.recovery_interval_ms = 0;
  service_ = std::make_unique<session::session_service>(io_.get_executor(), *store_, *runtime_, clock_,
                                                        session::make_node_identity("native-test"), o);
  auto r = run(service_->start());
  ASSERT_TRUE(r) << r.error().describe();
}

session_id native_fixture::new_session() {
  auto r = run(service_->create_session({}));
  EXPECT_TRUE(r) << r.error().describe();
  return r->id;
}

void native_fixture::admit(const session_id& s, std::string prompt, model::delivery d) {
  session::input_request req;
  req.prompt = std::move(prompt);
  req.delivery = d;
  auto r = run(service_->admit(s, std::move(req)));
  ASSERT_TRUE(r) << r.error().describe();
}

std::vector<model::event> native_fixture::events(const session_id& s) {
  auto r = run(store_->read(s, event_seq{0}, 100'000));
  EXPECT_TRUE(r) << r.error().describe();
  return r ? r->events : std::vector<model::event>{};
}

std::size_t native_fixture::count(const session_id& s, std::string_view type) {
  std::size_t n = 0;
  for (const auto& e : events(s))
    if (e.type() == type) ++n;
  return n;
}

std::vector<store::execution_row> native_fixture::executions(const session_id& s) {
  auto r = run(store_->list_executions(s));
  EXPECT_TRUE(r) << r.error().describe();
  return r ? *r : std::vector<store::execution_row>{};
}

std::string native_fixture::last_answer(const session_id& s) {
  std::string last;
  for (const auto& e : events(s))
    if (const auto* t = e.as<model::text_ended>()) last = t->text;
  return last;
}

std::string wire_name(const ::testing::TestParamInfo<wire_api>& info) {
  std::string n(runtime::native::to_string(info.param));
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
}

}  // namespace tether::testing
