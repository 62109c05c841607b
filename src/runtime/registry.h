// registry: the runtimes of one node, by the kind a profile names.
//
// A kind ("native", "codex-exec", "claude", "acp", …) is a factory
// that builds the runtime of one profile from its configuration
// (config::profile, whose `runtime` names the kind). The node adds the kinds
// it can run, then builds every profile's runtime through add_profile().
// The registry is then the session service's runtime (session/runtime.h):
//
//   run_turn(ctx)   goes to the runtime of ctx.profile ("" is `default`); a
//                   profile that was not added fails the turn, naming the
//                   known profiles
//   name(profile)   the profile's kind ("" for one that was not added)
//   model(profile)  which model answers it (config::model_label())
//   start()         starts every runtime built, in the order added; when one
//                   fails, the ones already started are stopped and the
//                   error names the profile
//   stop()          stops every runtime built, in reverse order
//   forget(s)       passed to every runtime built (a session's profile does
//                   not change, but the registry need not know it)
//
//   runtime::registry r;
//   r.add_kind("native", [&](const config::profile& p) { return build_native(p); });
//   TETHER_TRY(r.add_profile(profile));
//   session::session_service service(executor, store, r, clock, node);
//
// Errors of add_profile(): util_errc::invalid_argument naming the kinds
// added when the profile's kind is not one of them, or when the profile was
// already added; otherwise whatever the kind's factory returns.
//
// Threads: add_kind() and add_profile() before the service starts; what
// follows only reads the registry (thread-safe), and each call goes to the
// runtimes on the caller's executor.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "session/runtime.h"
#include "util/result.h"

namespace tether::runtime {

// Builds the runtime of one profile of a kind.
using runtime_factory = std::function<result<std::unique_ptr<session::runtime>>(const config::profile&)>;

class registry final : public session::runtime {
 public:
  registry() = default;
  registry(const registry&) = delete;
  registry& operator=(const registry&) = delete;

  // A kind added twice is a bug (TETHER_CHECK).
  void add_kind(std::string kind, runtime_factory make);
  [[nodiscard]] std::vector<std::string> kinds() const;  // sorted

  result<void> add_profile(const config::profile& p);
  // A profile that cannot run here (its key is not set, say): sessions of it
  // are refused, and a turn of one fails with `reason`.
  void disable(std::string profile, std::string reason);
  [[nodiscard]] bool has_profile(std::string_view name) const;  // "" is `default`
  // Why a session cannot name the profile: "" when it can.
  [[nodiscard]] std::string problem(std::string_view name) const;

  [[nodiscard]] std::string name(std::string_view profile) const override;
  [[nodiscard]] std::string model(std::string_view profile) const override;
  session::task<result<void>> start() override;
  session::task<void> stop() override;
  session::task<void> forget(session_id s) override;
  session::task<session::turn_result> run_turn(session::turn_context ctx,
                                               std::shared_ptr<session::turn_host> host) override;

 private:
  struct entry {
    std::string profile;
    std::string kind;
    std::string model;  // config::model_label()
    std::unique_ptr<session::runtime> runtime;
  };
  [[nodiscard]] const entry* find(std::string_view profile) const;
  [[nodiscard]] std::string known_profiles() const;

  std::map<std::string, runtime_factory, std::less<>> kinds_;
  std::vector<entry> entries_;  // in the order added
  std::map<std::string, std::string, std::less<>> disabled_;  // profile → why
};

}  // namespace tether::runtime
