#include "api/sse.h"

#include <boost/json/serialize.hpp>

namespace tether::api {

std::string sse_frame(const store::tail_item& item, bool with_id) {
  std::string out;
  if (with_id && item.durable) out += "id: " + std::to_string(item.event.seq.value) + "\n";
  out += "event: ";
  out += item.event.type();
  out += "\ndata: ";
  auto o = model::to_json(item.event);
  if (!item.durable) {
    o.erase("seq");
    o["ephemeral"] = true;
    if (item.event.seq.value > 0) o["after_seq"] = item.event.seq.value;  // a session tail's (tail.h)
  }
  out += boost::json::serialize(o);  // JSON text has no raw newlines
  out += "\n\n";
  return out;
}

}  // namespace tether::api
