// Agent programs' saved session state (store/agent_state_store.h), for
// every backend: chunks stored once, manifests that must name stored chunks,
// the newest state of a session, the byte budget and garbage collection.
#include "store/agent_state_store.h"

#include "backends.h"
#include "util/sha256.h"

namespace tether::store::test {
namespace {

template <class F>
class agent_state : public store_test<F> {
 protected:
  // A chunk whose bytes are `raw` stored as-is (the store keeps any bytes).
  static state_chunk chunk(const std::string& raw) {
    return state_chunk{sha256_hex(raw), static_cast<std::int64_t>(raw.size()), raw};
  }
  static model::agent_state_saved saved(const std::vector<state_chunk>& chunks, std::string agent = "agent-1") {
    // A file per chunk (a file's chunks are whole MiB but its last).
    model::agent_state_saved s{"claude-print", std::move(agent), 0, "/srv/w", {}, 0, 0};
    for (const auto& c : chunks) {
      s.manifest.push_back(
          model::state_file{".claude/projects/-srv-w/part-" + c.sha256.substr(0, 8), c.size, 0600, {c.sha256}});
      s.bytes += c.size;
    }
    return s;
  }
  std::int64_t put(std::vector<state_chunk> c) {
    auto r = this->run(this->store().put_chunks(std::move(c)));
    EXPECT_TRUE(r) << why(r);
    return r ? *r : -1;
  }
  std::int64_t save(const session_id& s, const std::vector<state_chunk>& chunks) {
    auto r = this->append(s, {saved(chunks)});
    EXPECT_TRUE(r) << why(r);
    return r ? r->events.back().seq.value : -1;
  }
};
TYPED_TEST_SUITE(agent_state, backends, backend_names);

TYPED_TEST(agent_state, a_chunk_is_stored_once_and_read_back_byte_for_byte) {
  this->open();
  std::string binary("\0\x01\xff deflated", 12);
  const auto a = this->chunk(binary);
  EXPECT_EQ(this->put({a}), 12);
  EXPECT_EQ(this->put({a}), 0) << "the same chunk again stores nothing";
  auto got = this->run(this->store().get_chunks({a.sha256}));
  ASSERT_TRUE(got) << why(got);
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ((*got)[0].data, binary);
  EXPECT_EQ((*got)[0].size, 12);
  auto missing = this->run(this->store().missing_chunks({a.sha256, sha256_hex("other")}));
  ASSERT_TRUE(missing) << why(missing);
  EXPECT_EQ(*missing, std::vector<std::string>{sha256_hex("other")});
  auto unknown = this->run(this->store().get_chunks({a.sha256, sha256_hex("other")}));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::not_found);
}

TYPED_TEST(agent_state, a_chunk_with_a_malformed_hash_is_refused_and_nothing_of_its_batch_is_kept) {
  this->open();
  const auto good = this->chunk("good");
  auto r = this->run(this->store().put_chunks({good, state_chunk{"../../etc/passwd", 1, "x"}}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
  auto missing = this->run(this->store().missing_chunks({good.sha256}));
  ASSERT_TRUE(missing) << why(missing);
  EXPECT_EQ(missing->size(), 1U) << "the refused request's other chunk is not kept either";
}

TYPED_TEST(agent_state, a_manifest_naming_a_chunk_that_is_not_stored_is_refused) {
  this->open();
  const auto s = this->new_session();
  auto r = this->append(s, {this->saved({this->chunk("never put")})});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::rejected);
  auto latest = this->run(this->store().latest_agent_state(s, event_seq{}));
  ASSERT_TRUE(latest) << why(latest);
  EXPECT_FALSE(*latest);
}

TYPED_TEST(agent_state, a_manifest_path_that_leaves_the_home_is_refused) {
  this->open();
  const auto s = this->new_session();
  const auto c = this->chunk("x");
  this->put({c});
  for (const std::string path : {"../escape", "/etc/passwd", "a/../../b", "", "a//b"}) {
    auto bad = this->saved({c});
    bad.manifest[0].path = path;
    auto r = this->append(s, {bad});
    ASSERT_FALSE(r) << path;
    EXPECT_EQ(r.error(), store_errc::rejected) << path;
  }
}

TYPED_TEST(agent_state, the_newest_state_of_a_session_is_found_at_or_before_a_seq) {
  this->open();
  const auto s = this->new_session();
  const auto other = this->new_session();
  const auto c1 = this->chunk("turn one");
  const auto c2 = this->chunk("turn two");
  this->put({c1, c2});
  const auto first = this->save(s, {c1});
  this->append(s, {model::synthetic{"between", "test"}});
  const auto second = this->save(s, {c1, c2});
  this->save(other, {c2});
  auto gone = this->append(s, {model::agent_state_unavailable{"claude-print", "agent-1", "restore failed"}});
  ASSERT_TRUE(gone) << why(gone);
  const auto third = gone->events.back().seq.value;

  auto newest = this->run(this->store().latest_agent_state(s, event_seq{}));
  ASSERT_TRUE(newest) << why(newest);
  ASSERT_TRUE(*newest);
  EXPECT_EQ((*newest)->seq.value, third);
  EXPECT_NE((*newest)->template as<model::agent_state_unavailable>(), nullptr);
  auto at = this->run(this->store().latest_agent_state(s, event_seq{second}));
  ASSERT_TRUE(at && *at);
  EXPECT_EQ((*at)->seq.value, second);
  const auto* state = (*at)->template as<model::agent_state_saved>();
  ASSERT_NE(state, nullptr);
  ASSERT_EQ(state->manifest.size(), 2U);
  EXPECT_EQ(state->manifest[1].chunks, (std::vector<std::string>{c2.sha256}));
  auto before = this->run(this->store().latest_agent_state(s, event_seq{second - 1}));
  ASSERT_TRUE(before && *before);
  EXPECT_EQ((*before)->seq.value, first);
  auto none = this->run(this->store().latest_agent_state(this->new_session(), event_seq{}));
  ASSERT_TRUE(none) << why(none);
  EXPECT_FALSE(*none);
  auto unknown = this->run(this->store().latest_agent_state(session_id::generate(), event_seq{}));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), store_errc::unknown_session);
}

TYPED_TEST(agent_state, the_budget_releases_older_states_and_collection_deletes_only_chunks_no_state_holds) {
  this->open();
  this->clock_.set(1'000);
  const auto s = this->new_session();
  const auto other = this->new_session();
  const std::string kib(1024, 'k');
  const auto shared = this->chunk("shared " + kib);
  const auto old_only = this->chunk("old " + kib);
  const auto mid_only = this->chunk("mid " + kib);
  const auto new_only = this->chunk("new " + kib);
  const auto elsewhere = this->chunk("other session " + kib);
  this->put({shared, old_only, mid_only, new_only, elsewhere});
  const auto old_seq = this->save(s, {shared, old_only});
  const auto mid_seq = this->save(s, {shared, mid_only});
  const auto new_seq = this->save(s, {shared, new_only});
  this->save(other, {elsewhere, old_only});

  // The newest two hold shared + new_only + mid_only: about 3 KiB.
  auto released = this->run(this->store().release_states(s, 3 * 1024 + 100));
  ASSERT_TRUE(released) << why(released);
  EXPECT_EQ(*released, 1U);
  auto held = [&](std::int64_t seq) {
    auto r = this->run(this->store().agent_state_held(s, event_seq{seq}));
    EXPECT_TRUE(r) << why(r);
    return r && *r;
  };
  EXPECT_FALSE(held(old_seq));
  EXPECT_TRUE(held(mid_seq));
  EXPECT_TRUE(held(new_seq));

  // Collection: nothing younger than `before`, and nothing a state holds.
  auto young = this->run(this->store().collect_chunks(1'000));
  ASSERT_TRUE(young) << why(young);
  EXPECT_EQ(young->chunks, 0U);
  this->clock_.set(2'000);
  const auto orphan = this->chunk("put but never saved");
  this->put({orphan});
  auto collected = this->run(this->store().collect_chunks(1'500));
  ASSERT_TRUE(collected) << why(collected);
  EXPECT_EQ(collected->chunks, 0U) << "old_only is still held by the other session; the orphan is young";
  auto none = this->run(this->store().release_states(s, 0));
  ASSERT_TRUE(none) << why(none);
  EXPECT_EQ(*none, 1U) << "the newest state is kept whatever its size";
  EXPECT_TRUE(held(new_seq));
  auto after = this->run(this->store().collect_chunks(3'000));
  ASSERT_TRUE(after) << why(after);
  EXPECT_EQ(after->chunks, 2U) << "mid_only and the orphan";
  auto missing = this->run(this->store().missing_chunks(
      {shared.sha256, old_only.sha256, mid_only.sha256, new_only.sha256, elsewhere.sha256, orphan.sha256}));
  ASSERT_TRUE(missing) << why(missing);
  EXPECT_EQ(*missing, (std::vector<std::string>{mid_only.sha256, orphan.sha256}));
}

TYPED_TEST(agent_state, release_of_an_unknown_session_is_not_found) {
  this->open();
  auto r = this->run(this->store().release_states(session_id::generate(), 10));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), store_errc::not_found);
}

}  // namespace
}  // namespace tether::store::test
