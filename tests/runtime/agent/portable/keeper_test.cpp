// portable/keeper: an agent's session state saved after a turn into a real
// store, restored into another node's home before the next, and what
// happens when it cannot be.
#include "runtime/agent/portable/keeper.h"

#include <sqlite3.h>

#include <fstream>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include "../agent_test_support.h"
#include "runtime/agent/portable/files.h"
#include "store/sqlite/sqlite_store.h"

namespace tether::runtime::agent::portable {
namespace {

using test::temp_dir;
namespace fs = std::filesystem;
namespace asio = boost::asio;

// A turn host whose record() appends to the store, as the runner's does.
class appending_host final : public session::turn_host {
 public:
  appending_host(store::event_store& s, session_id id) : store_(s), session_(std::move(id)) {}
  session::task<result<std::vector<store::message_row>>> boundary() override { co_return std::vector<store::message_row>{}; }
  session::task<result<session::boundary_result>> boundary_after(std::vector<model::payload>) override {
    co_return session::boundary_result{};
  }
  session::task<result<std::vector<model::event>>> record(std::vector<model::payload> events) override {
    // Named before the co_await (g++ 12 destroys a braced temporary there twice).
    store::append_request req{session_, std::move(events), {}, 0};
    auto r = co_await store_.append(std::move(req));
    if (!r) co_return r.error();
    co_return r->events;
  }
  void record_soon(std::vector<model::payload>) override {}
  void publish(model::payload) override {}
  void wake() override {}
  [[nodiscard]] std::stop_token stop_token() const override { return {}; }

 private:
  store::event_store& store_;
  session_id session_;
};

class keeper_test : public ::testing::Test {
 protected:
  void SetUp() override {
    open();
    auto created = run(store_->append(
        store::append_request{session_, {model::session_created{"t", "/w", "default"}}, {}, 0}));
    ASSERT_TRUE(created) << created.error().describe();
  }
  void open() {
    store::sqlite_options o;
    o.path = (dir_.path() / "tether.db").string();
    auto s = store::open_sqlite_store(o);
    ASSERT_TRUE(s) << s.error().describe();
    store_ = std::move(*s);
    keeper_ = std::make_unique<state_keeper>(*store_, real_clock(), keeper_options{});
    host_ = std::make_shared<appending_host>(*store_, session_);
  }
  void close() {
    keeper_.reset();
    host_.reset();
    if (store_) store_->stop();
    store_.reset();
  }
  void TearDown() override {
    close();
    ctx_.join();
  }
  template <class T>
  T run(asio::awaitable<T> aw) {
    return asio::co_spawn(ctx_.executor(), std::move(aw), asio::use_future).get();
  }
  fs::path home(const std::string& node) {
    const auto h = dir_.path() / node / "home";
    fs::create_directories(h);
    return h;
  }
  void save(const std::string& node, const std::string& workspace, const std::string& agent = "agent-1") {
    run(keeper_->save(session_, "claude-print", agent, 0, home(node), workspace, host_));
  }
  bool prepare(const std::string& node, const std::string& workspace, const std::string& agent = "agent-1") {
    store::runtime_binding b{"claude-print", agent, 0, event_seq{}, ""};
    return run(keeper_->prepare(session_, "claude-print", b, home(node), workspace, host_));
  }
  std::vector<model::event> log() {
    auto page = run(store_->read(session_, event_seq{}, 1000));
    EXPECT_TRUE(page);
    return page ? page->events : std::vector<model::event>{};
  }
  template <class T>
  std::vector<T> events_of() {
    std::vector<T> out;
    for (const auto& e : log())
      if (const auto* p = e.as<T>()) out.push_back(*p);
    return out;
  }

  temp_dir dir_;
  test::running_context ctx_;
  std::unique_ptr<store::event_store> store_;
  std::unique_ptr<state_keeper> keeper_;
  session_id session_ = session_id::generate();
  std::shared_ptr<appending_host> host_;
};

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(keeper_test, another_node_gets_the_state_saved_after_the_last_turn_before_it_resumes) {
  const auto a = home("a");
  const auto file = a / ".claude/projects" / claude_project_name("/a/ws") / "agent-1.jsonl";
  put(file, "turn 1\n");
  save("a", "/a/ws");
  put(file, "turn 1\nturn 2\n");
  save("a", "/a/ws");
  save("a", "/a/ws");  // unchanged: nothing new is recorded
  const auto saves = events_of<model::agent_state_saved>();
  ASSERT_EQ(saves.size(), 2U);
  EXPECT_EQ(saves[1].agent_session, "agent-1");
  EXPECT_EQ(saves[1].bytes, 14);
  EXPECT_GT(saves[0].stored, 0);
  EXPECT_TRUE(prepare("a", "/a/ws")) << "node a's home is current";

  EXPECT_TRUE(prepare("b", "/b/ws"));
  EXPECT_EQ(slurp(home("b") / ".claude/projects" / claude_project_name("/b/ws") / "agent-1.jsonl"),
            "turn 1\nturn 2\n");
  EXPECT_EQ(state_keeper::home_seq(home("b")), state_keeper::home_seq(a));
  EXPECT_TRUE(events_of<model::agent_state_unavailable>().empty());

  // Node b goes on; node a, taking the session back, is stale and restores b's turn.
  const auto b_file = home("b") / ".claude/projects" / claude_project_name("/b/ws") / "agent-1.jsonl";
  put(b_file, "turn 1\nturn 2\nturn 3 on b\n");
  save("b", "/b/ws");
  EXPECT_TRUE(prepare("a", "/a/ws"));
  EXPECT_EQ(slurp(file), "turn 1\nturn 2\nturn 3 on b\n");
}

TEST_F(keeper_test, a_chunk_that_does_not_match_its_hash_is_not_restored_and_the_binding_is_not_resumed) {
  put(home("a") / ".codex/sessions/r.jsonl", "rollout");
  run(keeper_->save(session_, "codex-exec", "th-1", 0, home("a"), "/a", host_));
  const auto saves = events_of<model::agent_state_saved>();
  ASSERT_EQ(saves.size(), 1U);
  // The chunk's row is damaged behind the store's back.
  close();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_.path() / "tether.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE agent_chunks SET data = X'00010203'", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  open();  // the same database again
  store::runtime_binding b{"codex-exec", "th-1", 0, event_seq{}, ""};
  EXPECT_FALSE(run(keeper_->prepare(session_, "codex-exec", b, home("b"), "/b", host_)));
  EXPECT_FALSE(fs::exists(home("b") / ".codex/sessions/r.jsonl"));
  const auto gone = events_of<model::agent_state_unavailable>();
  ASSERT_EQ(gone.size(), 1U);
  EXPECT_EQ(gone[0].agent_session, "th-1");
  EXPECT_NE(gone[0].reason.find("restoring"), std::string::npos) << gone[0].reason;
  // Recorded once: a second turn here knows it already.
  EXPECT_FALSE(run(keeper_->prepare(session_, "codex-exec", b, home("b"), "/b", host_)));
  EXPECT_EQ(events_of<model::agent_state_unavailable>().size(), 1U);
}

TEST_F(keeper_test, a_session_with_no_saved_state_and_a_state_of_another_agent_session_leave_the_home_alone) {
  EXPECT_TRUE(prepare("b", "/b/ws"));
  put(home("a") / ".claude/projects/x/old.jsonl", "old agent session");
  save("a", "/a/ws", "old-agent");
  EXPECT_TRUE(prepare("b", "/b/ws", "new-agent")) << "the saved state is not the binding's: nothing to restore";
  EXPECT_FALSE(fs::exists(home("b") / ".claude/projects/x/old.jsonl"));
}

}  // namespace
}  // namespace tether::runtime::agent::portable
