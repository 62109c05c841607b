// How the API shows the store's rows: the JSON objects described in
// docs/openapi.json (session, input, message, execution, interaction).
// Pure functions, no I/O; session_view reads what it needs through the store.
#pragma once

#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "store/event_store.h"
#include "store/types.h"

namespace tether::api {

boost::json::object input_view(const store::input_row& in);
boost::json::object execution_view(const store::execution_row& x);
boost::json::object interaction_view(const store::interaction_row& i);
boost::json::object usage_view(const model::usage& u);

// The transcript as messages: user and assistant messages, tool results
// (role "tool") and synthetic notices, in seq order. An assistant message
// carries the tool calls it made, each with its state and result (a call
// with no result yet is "running").
boost::json::array messages_view(const std::vector<store::message_row>& rows);

// {id, title, workspace, profile, status, generation, last_seq, pending_inputs}:
// status is running (an open execution, an answered question about to be
// continued, or `active`: this node is working on it), waiting (a pending
// interaction) or idle.
boost::asio::awaitable<result<boost::json::object>> session_view(store::event_store& store, store::session_row row,
                                                                 bool active);

}  // namespace tether::api
