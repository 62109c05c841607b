#include "session/fork.h"

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>

#include "util/errors.h"

namespace tether::session {

namespace {

error bad_at(std::string why) { return make_error(util_errc::invalid_argument, "at: " + std::move(why)); }

// Old id -> new id, made on first sight.
template <class Id>
class renames {
 public:
  Id operator()(const Id& old) {
    if (old.empty()) return old;
    auto [it, fresh] = map_.try_emplace(old.str());
    if (fresh) it->second = Id::generate();
    return it->second;
  }

 private:
  std::map<std::string, Id, std::less<>> map_;
};

// Which inputs the fork keeps: those promoted (the transcript holds them) at `at`.
std::set<std::string, std::less<>> promoted_at(const std::vector<model::event>& log, std::int64_t at) {
  std::map<std::string, bool, std::less<>> promoted;
  for (const auto& e : log) {
    if (e.seq.value > at) break;
    if (const auto* a = e.as<model::input_admitted>()) promoted[a->input.str()] = false;
    if (const auto* p = e.as<model::input_promoted>()) promoted[p->input.str()] = true;
    if (const auto* r = e.as<model::input_returned>()) promoted[r->input.str()] = false;
  }
  std::set<std::string, std::less<>> out;
  for (const auto& [id, yes] : promoted)
    if (yes) out.insert(id);
  return out;
}

class copier {
 public:
  copier(const std::vector<model::event>& log, const fork_point& p, const fork_names& names)
      : log_(log), p_(p), names_(names), kept_inputs_(promoted_at(log, p.seq)),
        newest_state_(newest_agent_state(log, p)) {}

  std::vector<model::payload> run() {
    // Pass 1: which events are copied, and the fork's seq of each (its
    // session.created is seq 1).
    std::int64_t next = 2;
    for (const auto& e : log_) {
      if (e.seq.value > p_.seq) break;
      if (!kept(e)) continue;
      seqs_[e.seq.value] = next++;
    }
    // Pass 2: the copies.
    for (const auto& e : log_) {
      if (e.seq.value > p_.seq) break;
      if (!seqs_.contains(e.seq.value)) continue;
      out_.push_back(std::visit([this](const auto& body) { return copy(body); }, e.body));
    }
    out_.emplace_back(model::session_forked{names_.from, names_.fork, p_.seq, names_.snapshot});
    return std::move(out_);
  }

 private:
  bool kept(const model::event& e) const {
    if (e.seq.value == 1) return false;  // the source's session.created
    return std::visit(
        [&](const auto& body) -> bool {
          using T = std::decay_t<decltype(body)>;
          if constexpr (std::is_same_v<T, model::input_admitted> || std::is_same_v<T, model::input_promoted> ||
                        std::is_same_v<T, model::input_returned>) {
            return kept_inputs_.contains(body.input.str());
          } else if constexpr (std::is_same_v<T, model::agent_state_saved> ||
                               std::is_same_v<T, model::agent_state_unavailable>) {
            return e.seq.value == newest_state_;
          } else {
            return !(std::is_same_v<T, model::session_created> || std::is_same_v<T, model::session_updated> ||
                     std::is_same_v<T, model::session_forked> || std::is_same_v<T, model::input_cancelled> ||
                     std::is_same_v<T, model::env_lease_requested> ||
                     std::is_same_v<T, model::env_lease_acquired> ||
                     std::is_same_v<T, model::env_lease_released> ||
                     std::is_same_v<T, model::env_workspace_synced> || std::is_same_v<T, model::task_created> ||
                     std::is_same_v<T, model::task_updated> || std::is_same_v<T, model::task_status_changed> ||
                     std::is_same_v<T, model::task_commented> || std::is_same_v<T, model::document_revised> ||
                     std::is_same_v<T, model::document_accepted> || std::is_same_v<T, model::task_prepared>);
          }
        },
        e.body);
  }

  // The fork's seq of the last copied event at or before `old` (0: none).
  std::int64_t at_or_before(std::int64_t old) const {
    auto it = seqs_.upper_bound(old);
    return it == seqs_.begin() ? 0 : std::prev(it)->second;
  }
  // The fork's seq of the first copied event at or after `old`.
  std::int64_t at_or_after(std::int64_t old) const {
    auto it = seqs_.lower_bound(old);
    return it == seqs_.end() ? static_cast<std::int64_t>(seqs_.size()) + 2 : it->second;
  }

  template <class T>
  model::payload copy(T p) {
    if constexpr (std::is_same_v<T, model::input_admitted> || std::is_same_v<T, model::input_cancelled>) {
      p.input = input_(p.input);
    } else if constexpr (std::is_same_v<T, model::input_promoted> || std::is_same_v<T, model::input_returned>) {
      p.input = input_(p.input);
      p.execution = execution_(p.execution);
    } else if constexpr (std::is_same_v<T, model::execution_started> ||
                         std::is_same_v<T, model::execution_recovered> ||
                         std::is_same_v<T, model::step_started>) {
      p.execution = execution_(p.execution);
    } else if constexpr (std::is_same_v<T, model::execution_finished>) {
      p.execution = execution_(p.execution);
      p.usage = {};
    } else if constexpr (std::is_same_v<T, model::step_ended>) {
      p.usage = {};
      p.agent_cost_usd.reset();
    } else if constexpr (std::is_same_v<T, model::text_ended>) {
      p.message = input_(p.message);
    } else if constexpr (std::is_same_v<T, model::tool_called> || std::is_same_v<T, model::tool_succeeded> ||
                         std::is_same_v<T, model::tool_failed>) {
      p.call = call_(p.call);
    } else if constexpr (std::is_same_v<T, model::interaction_requested>) {
      p.interaction = interaction_(p.interaction);
      p.call = call_(p.call);
    } else if constexpr (std::is_same_v<T, model::interaction_resolved>) {
      p.interaction = interaction_(p.interaction);
    } else if constexpr (std::is_same_v<T, model::runtime_bound>) {
      p.last_seen_seq = at_or_before(p.last_seen_seq);
    } else if constexpr (std::is_same_v<T, model::compaction_ended>) {
      p.kept_from_seq = at_or_after(p.kept_from_seq);
    } else if constexpr (std::is_same_v<T, model::agent_state_saved>) {
      if (!names_.state_held)
        return model::agent_state_unavailable{
            p.kind, p.agent_session,
            "the source's state budget released this state before the fork: a new agent session starts with "
            "the transcript"};
    }
    return p;
  }

  const std::vector<model::event>& log_;
  const fork_point& p_;
  const fork_names& names_;
  std::set<std::string, std::less<>> kept_inputs_;
  std::int64_t newest_state_ = 0;
  std::map<std::int64_t, std::int64_t> seqs_;  // source seq -> fork seq
  renames<input_id> input_;
  renames<execution_id> execution_;
  renames<call_id> call_;
  renames<interaction_id> interaction_;
  std::vector<model::payload> out_;
};

}  // namespace

result<fork_point> fork_point_of(const std::vector<model::event>& log, std::optional<std::int64_t> at) {
  if (at && *at < 1) return bad_at("a seq is 1 or more");
  std::optional<fork_point> last;
  for (const auto& e : log) {
    if (at && e.seq.value > *at) break;
    const auto* f = e.as<model::execution_finished>();
    if (at && e.seq.value == *at) {
      if (f == nullptr)
        return bad_at(std::to_string(*at) + " is a " + std::string(e.type()) +
                      " event, not the end of a turn (execution.finished)");
      return fork_point{*at, f->execution};
    }
    if (f != nullptr) last = fork_point{e.seq.value, f->execution};
  }
  if (at) return bad_at("the session has no event " + std::to_string(*at));
  if (!last) return bad_at("the session has no finished turn yet");
  return *last;
}

std::int64_t newest_agent_state(const std::vector<model::event>& log, const fork_point& p) {
  std::int64_t newest = 0;
  for (const auto& e : log) {
    if (e.seq.value > p.seq) break;
    if (e.as<model::agent_state_saved>() != nullptr || e.as<model::agent_state_unavailable>() != nullptr)
      newest = e.seq.value;
  }
  return newest;
}

std::vector<model::payload> fork_log(const std::vector<model::event>& log, const fork_point& p,
                                     const fork_names& names) {
  return copier(log, p, names).run();
}

}  // namespace tether::session
