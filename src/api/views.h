// How the API shows the store's rows: the JSON objects described in
// docs/openapi.json (session, input, message, execution, interaction).
// Pure functions, no I/O.
#pragma once

#include <filesystem>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "session/queries.h"
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

// {id, title, workspace, profile, metadata, status, generation, last_seq,
// pending_inputs, created_at}: the status is the session layer's
// (session/queries.h: running, waiting or idle).
// A session created without a workspace works in DATA/workspaces/ID and
// one without a profile runs `default`: the view says so (data_dir empty:
// the workspace is shown as stored).
boost::json::object session_view(const session::session_summary& s, const std::filesystem::path& data_dir = {});

}  // namespace tether::api
