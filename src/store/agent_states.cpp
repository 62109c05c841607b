#include "store/agent_states.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace tether::store {

namespace {

bool is_sha256_hex(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

result<std::int64_t> put_chunks(write_rows& rows, const std::vector<state_chunk>& chunks) {
  const auto now = rows.now();
  std::int64_t added = 0;
  for (const auto& c : chunks) {
    if (!is_sha256_hex(c.sha256))
      return make_error(store_errc::rejected, "a chunk's sha256 is not 64 lowercase hex digits");
    if (c.size < 0) return make_error(store_errc::rejected, "chunk " + c.sha256 + " has a negative size");
    auto put = rows.put_chunk(c, now);
    if (!put) return put.error();
    if (*put) added += static_cast<std::int64_t>(c.data.size());
  }
  return added;
}

result<std::size_t> release_states(write_rows& rows, const session_id& s, std::int64_t keep_bytes) {
  auto head = rows.load_session(s);
  if (!head) return head.error();
  if (!*head) return make_error(store_errc::not_found, "no session " + s.str());
  auto refs = rows.state_refs((*head)->key);
  if (!refs) return refs.error();
  // Newest state first; each state's chunks not held by a newer one count.
  std::map<std::int64_t, std::vector<const state_ref*>, std::greater<>> by_state;
  for (const auto& r : *refs) by_state[r.seq].push_back(&r);
  std::set<std::string> counted;
  std::int64_t total = 0;
  bool newest = true;
  for (const auto& [seq, chunks] : by_state) {
    for (const auto* r : chunks)
      if (counted.insert(r->sha256).second) total += r->bytes;
    if (!newest && total > keep_bytes) return rows.release_states_before((*head)->key, seq + 1);
    newest = false;
  }
  return std::size_t{0};
}

result<chunk_collection> collect_chunks(write_rows& rows, time_ms before) {
  auto gone = rows.delete_unreferenced_chunks(before);
  if (!gone) return gone.error();
  return chunk_collection{gone->first, gone->second};
}

}  // namespace tether::store
