// Server-sent events: how one event is framed on the wire.
//
//   id: 42                      (durable events of a session stream: the seq)
//   event: text.ended
//   data: {"id":…,"session_id":…,"seq":42,"type":"text.ended",…}
//   <blank line>
//
// Ephemeral events (text.delta, reasoning.delta, tool.progress) have no
// `id:` line, so a reconnecting client resumes after the last durable event.
// The global stream has no `id:` lines at all (seqs are per session).
#pragma once

#include <string>

#include "store/event_store.h"

namespace tether::api {

std::string sse_frame(const store::tail_item& item, bool with_id);
inline constexpr std::string_view sse_heartbeat = ": heartbeat\n\n";

}  // namespace tether::api
