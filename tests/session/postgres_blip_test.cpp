// A database blip on PostgreSQL while a turn runs: every connection the
// store has to its database is ended by the server (pg_terminate_backend,
// as a restart or an operator's kill does) while the turn waits at its
// gate; the turn's next write meets the dead connection. The runner waits
// for the store to reconnect and writes it then: every acknowledged input is
// answered, once. The session's store is the real PostgreSQL backend, on a
// database of its own in the tests' shared cluster (support/postgres.h).
#include "session/service.h"

#include <algorithm>
#include <map>
#include <set>

#include "session/fixture.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/pq.h"
#include "support/postgres.h"

namespace tether::testing {
namespace {

using model::delivery;

class postgres_blip_test : public session_fixture {
 protected:
  postgres_blip_test() {
    close_store();
    auto& cluster = tether::test::postgres_cluster::get();
    url_ = cluster.fresh_database();
    store::postgres_options o;
    o.url = url_;
    o.clock = &clock_;
    o.retry_initial_ms = 5;
    o.retry_max_ms = 50;
    auto s = store::open_postgres_store(std::move(o));
    if (!s) throw std::runtime_error(s.error().describe());
    store_ = std::move(s.value());
    auto admin = store::postgres::connection::open(cluster.admin_url(), store::store_errc::read_failed);
    if (!admin) throw std::runtime_error(admin.error().describe());
    admin_ = std::move(*admin);
  }
  ~postgres_blip_test() override {
    stop_service();
    close_store();
    admin_.reset();
    tether::test::postgres_cluster::get().drop_database(url_);
  }

  // The pids of the server processes serving the store's database.
  std::set<std::int64_t> backends() {
    const auto at = url_.find('/', url_.find('@'));
    const std::string name = url_.substr(at + 1, url_.find('?') - at - 1);
    auto r = admin_->exec_rows("SELECT pid FROM pg_stat_activity WHERE datname = " + admin_->literal(name));
    EXPECT_TRUE(r) << r.error().describe();
    std::set<std::int64_t> out;
    while (r && r->step()) out.insert(r->int64(0));
    return out;
  }

  // Ends every connection of the store and waits until their server
  // processes are gone (the store reconnects by itself afterwards).
  void blip() {
    const auto before = backends();
    ASSERT_FALSE(before.empty());
    for (const auto pid : before)
      ASSERT_TRUE(admin_->exec("SELECT pg_terminate_backend(" + std::to_string(pid) + ")"));
    ASSERT_TRUE(eventually([&] {
      const auto now = backends();
      return std::none_of(before.begin(), before.end(), [&](std::int64_t pid) { return now.contains(pid); });
    }));
  }

  std::string url_;
  std::unique_ptr<store::postgres::connection> admin_;
};

TEST_F(postgres_blip_test, a_blip_during_a_turn_leaves_every_acknowledged_input_answered_once) {
  auto opts = test_options();
  opts.lease_renew_ms = 600'000;  // no renewal: the turn's write is the first to meet the dead connection
  opts.storage_retry_ms = 5;
  opts.storage_retry_max_ms = 50;
  make_service(opts);
  const auto s = new_session();
  runtime_.script({gate(), text("answer to the first")});
  runtime_.script({text("answer to the second")});
  const auto first = admit(s, "first").input.id;
  ASSERT_TRUE(eventually([&] { return runtime_.arrivals() == 1; }));
  const auto second = admit(s, "second", delivery::queue).input.id;
  blip();
  runtime_.open_gate();
  idle(s);

  EXPECT_TRUE(runtime_.host_errors().empty()) << runtime_.host_errors().front().describe();
  std::vector<std::string> answers;
  std::map<std::string, int> promotions;
  std::vector<model::outcome> outcomes;
  for (const auto& e : events(s)) {
    if (const auto* t = e.as<model::text_ended>()) answers.push_back(t->text);
    if (const auto* p = e.as<model::input_promoted>()) ++promotions[p->input.str()];
    if (const auto* f = e.as<model::execution_finished>()) outcomes.push_back(f->outcome);
  }
  EXPECT_EQ(answers, (std::vector<std::string>{"answer to the first", "answer to the second"}));
  EXPECT_EQ(promotions, (std::map<std::string, int>{{first.str(), 1}, {second.str(), 1}}));
  EXPECT_EQ(outcomes, std::vector<model::outcome>{model::outcome::succeeded});
  EXPECT_EQ(count(s, "input.returned"), 0U);
}

}  // namespace
}  // namespace tether::testing
