// Server-sent events: how one event is framed on the wire.
//
//   id: 42                      (durable events of a session stream: the seq)
//   event: text.ended
//   data: {"id":…,"session_id":…,"seq":42,"type":"text.ended",…}
//   <blank line>
//
// Ephemeral events (text.delta, reasoning.delta, tool.progress) are progress
// only: no `id:` line, so a reconnecting client resumes after the last
// durable event, and no "seq" in their data, which carries instead
//   "ephemeral": true, "id": "eph_17"   (a count of the node's ephemerals:
//                                        never a seq, never stored, not
//                                        unique across restarts)
//   "after_seq": 41                     (a session stream: the durable
//                                        event it follows; absent in the
//                                        global stream)
// A client shows them and forgets them: the durable event that ends the
// part (text.ended, reasoning.ended, tool.finished) holds the whole of it,
// and deltas are dropped first when a reader falls behind. A session
// stream never delivers a delta before a durable event recorded earlier in
// the turn (store/tail.h, Order). The global stream has no `id:` lines at
// all (seqs are per session).
#pragma once

#include <string>

#include "store/event_log.h"

namespace tether::api {

std::string sse_frame(const store::tail_item& item, bool with_id);
inline constexpr std::string_view sse_heartbeat = ": heartbeat\n\n";

}  // namespace tether::api
