#include "runtime/registry.h"

#include <algorithm>

#include "util/check.h"
#include "util/errors.h"

namespace tether::runtime {

namespace {

std::string_view profile_name(std::string_view name) { return name.empty() ? std::string_view("default") : name; }

}  // namespace

void registry::add_kind(std::string kind, runtime_factory make) {
  TETHER_CHECK(!kinds_.contains(kind), "runtime kind " + kind + " added twice");
  kinds_.emplace(std::move(kind), std::move(make));
}

std::vector<std::string> registry::kinds() const {
  std::vector<std::string> out;
  for (const auto& [kind, make] : kinds_) out.push_back(kind);
  return out;
}

result<void> registry::add_profile(const config::profile& p) {
  if (find(p.name) != nullptr)
    return make_error(util_errc::invalid_argument, "profile " + p.name + " has a runtime already");
  const auto kind = kinds_.find(p.runtime);
  if (kind == kinds_.end()) {
    std::string known;
    for (const auto& k : kinds()) known += (known.empty() ? "" : ", ") + k;
    return make_error(util_errc::invalid_argument,
                      "profile " + p.name + ": runtime \"" + p.runtime + "\" is not available (known: " + known + ")");
  }
  auto built = kind->second(p);
  if (!built) return built.error();
  entries_.push_back(entry{p.name, p.runtime, config::model_label(p), std::move(built).value()});
  return ok();
}

const registry::entry* registry::find(std::string_view profile) const {
  const auto name = profile_name(profile);
  const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) { return e.profile == name; });
  return it == entries_.end() ? nullptr : &*it;
}

bool registry::has_profile(std::string_view name) const { return find(name) != nullptr; }

void registry::disable(std::string profile, std::string reason) { disabled_.insert_or_assign(std::move(profile), std::move(reason)); }

std::string registry::problem(std::string_view name) const {
  if (find(name) != nullptr) return {};
  const auto profile = profile_name(name);
  if (const auto d = disabled_.find(profile); d != disabled_.end())
    return "profile '" + std::string(profile) + "' is disabled on this node: " + d->second;
  return "profile '" + std::string(profile) + "' is not configured (known: " + known_profiles() + ")";
}

std::string registry::known_profiles() const {
  std::vector<std::string> names;
  for (const auto& e : entries_) names.push_back(e.profile);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string registry::name(std::string_view profile) const {
  const auto* e = find(profile);
  return e == nullptr ? std::string() : e->kind;
}

std::string registry::model(std::string_view profile) const {
  const auto* e = find(profile);
  return e == nullptr ? std::string() : e->model;
}

session::task<result<void>> registry::start() {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto started = co_await entries_[i].runtime->start();
    if (started) continue;
    for (std::size_t j = i; j > 0; --j) co_await entries_[j - 1].runtime->stop();
    co_return error(started.error().code, "profile " + entries_[i].profile + " (runtime " + entries_[i].kind +
                                              "): " + started.error().message);
  }
  co_return ok();
}

session::task<void> registry::stop() {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) co_await it->runtime->stop();
}

session::task<void> registry::forget(session_id s) {
  for (auto& e : entries_) co_await e.runtime->forget(s);
}

session::task<session::turn_result> registry::run_turn(session::turn_context ctx,
                                                       std::shared_ptr<session::turn_host> host) {
  const auto* e = find(ctx.profile);
  if (e == nullptr) {
    session::turn_result failed;
    failed.status = session::turn_status::failed;
    failed.error = problem(ctx.profile);
    co_return failed;
  }
  co_return co_await e->runtime->run_turn(std::move(ctx), std::move(host));
}

}  // namespace tether::runtime
