#include "runtime/agent/portable/keeper.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "runtime/agent/portable/files.h"
#include "store/async.h"
#include "util/deflate.h"
#include "util/sha256.h"

namespace tether::runtime::agent::portable {

namespace asio = boost::asio;
namespace fs = std::filesystem;

// What the keeper remembers of one session between its turns on this node.
struct state_keeper::session_memory {
  std::mutex mu;
  read_cache cache;
  std::set<std::string> stored;  // chunks known to be in the store
  std::vector<model::state_file> last;  // the manifest saved last
};

namespace {

// Runs `fn` on `pool` and resumes the caller on its own executor with its
// value. What `fn` refers to must outlive the await (the caller's locals do).
template <class Fn>
auto on_pool(asio::thread_pool& pool, Fn fn) -> asio::awaitable<decltype(fn())> {
  using value = decltype(fn());
  return store::async_op<value>([&pool, fn = std::move(fn)](store::completion<value> done) mutable {
    asio::post(pool, [fn = std::move(fn), done = std::move(done)]() mutable { done(fn()); });
  });
}

fs::path seq_file(const fs::path& home) { return home.parent_path() / "agent-state.seq"; }

// Inflates and verifies the chunks of `saved` as the store gave them.
result<chunk_bytes> unpack(const std::vector<store::state_chunk>& got) {
  chunk_bytes out;
  for (const auto& c : got) {
    if (c.size < 0 || c.size > static_cast<std::int64_t>(model::state_file::chunk_bytes))
      return make_error(util_errc::invalid_argument, "chunk " + c.sha256 + " claims " + std::to_string(c.size) + " bytes");
    auto raw = inflate_bytes(c.data, static_cast<std::size_t>(c.size));
    if (!raw) return make_error(util_errc::invalid_argument, "chunk " + c.sha256 + ": " + raw.error().message);
    if (sha256_hex(*raw) != c.sha256)
      return make_error(util_errc::invalid_argument, "chunk " + c.sha256 + " does not match its SHA-256");
    out.emplace(c.sha256, std::move(*raw));
  }
  return out;
}

// The events are built outside the coroutines: g++ 12 destroys a braced
// aggregate temporary inside a coroutine twice.
std::vector<model::payload> unavailable_event(std::string kind, std::string agent_session, std::string reason) {
  std::vector<model::payload> out;
  out.emplace_back(model::agent_state_unavailable{std::move(kind), std::move(agent_session), std::move(reason)});
  return out;
}

std::vector<model::payload> saved_event(std::string kind, std::string agent_session, std::int64_t generation,
                                        std::string workspace, std::vector<model::state_file> files, std::int64_t bytes,
                                        std::int64_t stored) {
  model::agent_state_saved saved;
  saved.kind = std::move(kind);
  saved.agent_session = std::move(agent_session);
  saved.generation = generation;
  saved.workspace = std::move(workspace);
  saved.manifest = std::move(files);
  saved.bytes = bytes;
  saved.stored = stored;
  std::vector<model::payload> out;
  out.emplace_back(std::move(saved));
  return out;
}

std::vector<std::string> chunks_of(const std::vector<model::state_file>& files) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const auto& f : files)
    for (const auto& c : f.chunks)
      if (seen.insert(c).second) out.push_back(c);
  return out;
}

}  // namespace

state_keeper::state_keeper(const tether::clock& clock, keeper_options o) : clock_(clock), o_(o) {}

state_keeper::state_keeper(store::agent_state_store& store, const tether::clock& clock, keeper_options o)
    : store_(&store), clock_(clock), o_(o) {}

state_keeper::~state_keeper() { files_.join(); }

std::optional<std::int64_t> state_keeper::home_seq(const fs::path& home) {
  std::ifstream in(seq_file(home));
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

void state_keeper::set_home_seq(const fs::path& home, std::int64_t seq) {
  const auto path = seq_file(home);
  const auto tmp = fs::path(path.string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << seq << '\n';
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) spdlog::warn("agent state: cannot record the state of {}: {}", home.string(), ec.message());
}

std::shared_ptr<state_keeper::session_memory> state_keeper::memory(const session_id& s) {
  std::lock_guard lock(mu_);
  auto& m = sessions_[s];
  if (!m) m = std::make_shared<session_memory>();
  return m;
}

void state_keeper::forget(const session_id& s) {
  std::lock_guard lock(mu_);
  sessions_.erase(s);
}

asio::awaitable<bool> state_keeper::prepare(session_id s, std::string kind, store::runtime_binding binding,
                                            fs::path home, fs::path workspace,
                                            std::shared_ptr<session::turn_host> host) {
  if (store_ == nullptr) co_return true;
  auto latest = co_await store_->latest_agent_state(s, event_seq{});
  if (!latest) {
    spdlog::warn("agent state: reading the saved state of {}: {}", s.str(), latest.error().message);
    co_return true;  // as before there was a store of states: the home as it is
  }
  if (!*latest) co_return true;
  const auto seq = (*latest)->seq.value;
  // Its state is gone for every node, this one's home included (whatever
  // it holds may be older than the turn whose save failed).
  if (const auto* u = (*latest)->as<model::agent_state_unavailable>()) {
    if (u->agent_session != binding.external_session_id) co_return true;
    spdlog::info("agent state: {} cannot resume {}: {}", s.str(), binding.external_session_id, u->reason);
    co_return false;
  }
  if (home_seq(home) == seq) co_return true;
  const auto* saved = (*latest)->as<model::agent_state_saved>();
  if (saved == nullptr || saved->agent_session != binding.external_session_id) co_return true;
  if (family_of(saved->kind) != family_of(kind)) {
    auto why = "the state of " + saved->agent_session + " was saved by " + saved->kind + ", not " + kind;
    co_await unavailable(s, kind, binding.external_session_id, std::move(why), host);
    co_return false;
  }
  auto copy = *saved;
  const auto restored = co_await restore(s, kind, std::move(copy), seq, home, workspace);
  if (restored) co_return true;
  auto why = "restoring the state saved at seq " + std::to_string(seq) + " failed (see the node's log)";
  co_await unavailable(s, kind, binding.external_session_id, std::move(why), host);
  co_return false;
}

asio::awaitable<bool> state_keeper::restore(session_id s, std::string kind, model::agent_state_saved saved,
                                            std::int64_t seq, fs::path home, fs::path workspace) {
  const auto started = std::chrono::steady_clock::now();
  auto got = co_await store_->get_chunks(chunks_of(saved.manifest));
  if (!got) {
    spdlog::warn("agent state: the chunks of {} at seq {}: {}", s.str(), seq, got.error().message);
    co_return false;
  }
  const auto f = family_of(kind);
  // Each job is named before it is awaited: g++ 12 destroys a temporary
  // in a co_await expression twice.
  auto writing = [&got, &saved, &home, &workspace, f]() -> result<void> {
    auto chunks = unpack(*got);
    if (!chunks) return chunks.error();
    return write_state(home, f, saved, *chunks, workspace.string());
  };
  auto written = co_await on_pool(files_, std::move(writing));
  if (!written) {
    spdlog::warn("agent state: restoring {} at seq {} into {}: {}", s.str(), seq, home.string(),
                 written.error().message);
    co_return false;
  }
  set_home_seq(home, seq);
  memory(s)->cache = {};
  spdlog::info("agent state: {} restored {} ({} files, {} bytes) in {} ms", s.str(), saved.agent_session,
               saved.manifest.size(), saved.bytes,
               std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
                   .count());
  co_return true;
}

asio::awaitable<void> state_keeper::unavailable(session_id s, std::string kind, std::string agent_session,
                                                std::string reason,
                                                std::shared_ptr<session::turn_host> host) {
  spdlog::warn("agent state: {} ({}): {}", s.str(), agent_session, reason);
  auto events = unavailable_event(std::move(kind), std::move(agent_session), std::move(reason));
  auto recorded = co_await host->record(std::move(events));
  if (!recorded) spdlog::warn("agent state: recording why for {}: {}", s.str(), recorded.error().message);
}

asio::awaitable<void> state_keeper::save(session_id s, std::string kind, std::string agent_session,
                                         std::int64_t generation, fs::path home, fs::path workspace,
                                         std::shared_ptr<session::turn_host> host) {
  if (agent_session.empty() || store_ == nullptr) co_return;
  auto mem = memory(s);
  const auto f = family_of(kind);
  const auto budget = o_.budget_bytes;
  auto reading = [mem, &home, f, budget]() {
    std::lock_guard lock(mem->mu);
    return read_state(home, f, &mem->cache, read_limits{.max_bytes = budget});
  };
  auto read = co_await on_pool(files_, std::move(reading));
  if (!read) {
    auto why = "reading its state: " + read.error().message;
    co_await unavailable(s, kind, agent_session, std::move(why), host);
    co_return;
  }
  if (read->files.empty()) co_return;  // the program kept nothing (yet)
  if (read->files == mem->last) co_return;  // unchanged since the last save
  const auto all_chunks = chunks_of(read->files);
  std::vector<std::string> unknown;
  for (const auto& c : all_chunks)
    if (!mem->stored.contains(c)) unknown.push_back(c);
  auto missing = co_await store_->missing_chunks(unknown);
  if (!missing) {
    auto why = "asking the store for its chunks: " + missing.error().message;
    co_await unavailable(s, kind, agent_session, std::move(why), host);
    co_return;
  }
  // A chunk the cache answered for, but the store lost (collected), is read again next time.
  auto packing = [&missing, &read]() -> result<std::vector<store::state_chunk>> {
    std::vector<store::state_chunk> out;
    for (const auto& sha : *missing) {
      const auto it = read->read.find(sha);
      if (it == read->read.end())
        return make_error(util_errc::invalid_argument, "chunk " + sha + " is neither stored nor read now");
      out.push_back(store::state_chunk{sha, static_cast<std::int64_t>(it->second.size()), deflate_bytes(it->second)});
    }
    return out;
  };
  auto packed = co_await on_pool(files_, std::move(packing));
  if (!packed) {
    mem->cache = {};
    auto why = packed.error().message;
    co_await unavailable(s, kind, agent_session, std::move(why), host);
    co_return;
  }
  auto put = co_await store_->put_chunks(std::move(*packed));
  if (!put) {
    auto why = "storing its chunks: " + put.error().message;
    co_await unavailable(s, kind, agent_session, std::move(why), host);
    co_return;
  }
  auto events = saved_event(kind, agent_session, generation, workspace.string(), read->files, read->bytes, *put);
  auto recorded = co_await host->record(std::move(events));
  if (!recorded) {
    spdlog::warn("agent state: recording the state of {}: {}", s.str(), recorded.error().message);
    co_return;
  }
  if (!recorded->empty()) set_home_seq(home, recorded->back().seq.value);
  mem->stored.insert(all_chunks.begin(), all_chunks.end());
  mem->last = std::move(read->files);
  auto released = co_await store_->release_states(s, o_.budget_bytes);
  if (released && *released > 0) {
    auto gone = co_await store_->collect_chunks(clock_.now() - o_.collect_after_ms);
    if (gone)
      spdlog::info("agent state: {} released {} older states over its budget; {} chunks ({} bytes) collected",
                   s.str(), *released, gone->chunks, gone->bytes);
    mem->stored.clear();  // what was collected is not known one by one
  }
}

}  // namespace tether::runtime::agent::portable
