#include "work/fingerprint.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace tether::work {
namespace {

namespace json = boost::json;

json::value parse(std::string_view text) { return json::parse(text); }

// ---- canonical form ----

TEST(CanonicalJson, SortsKeysAtEveryDepthAndKeepsArrayOrder) {
  EXPECT_EQ(canonical_json(parse(R"({"b": 1, "a": {"z": [3, 1, {"y": 2, "x": 1}], "m": null}})")),
            R"({"a":{"m":null,"z":[3,1,{"x":1,"y":2}]},"b":1})");
}

TEST(CanonicalJson, TheOrderKeysWereWrittenInDoesNotMatter) {
  EXPECT_EQ(fingerprint(parse(R"({"model": "m", "provider": "anthropic", "limits": {"a": 1, "b": 2}})")),
            fingerprint(parse(R"({"limits": {"b": 2, "a": 1}, "provider": "anthropic", "model": "m"})")));
}

TEST(CanonicalJson, DropsVolatileKeysWhereverTheyAre) {
  const auto a = parse(R"({"id": "task_1", "name": "p", "repos": [{"url": "u", "created_at": 5}], "time": 9})");
  const auto b = parse(R"({"id": "task_2", "name": "p", "repos": [{"url": "u", "created_at": 7}], "time": 1})");
  EXPECT_EQ(canonical_json(a), R"({"name":"p","repos":[{"url":"u"}]})");
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  fingerprint_rules none;
  none.volatile_keys.clear();
  EXPECT_NE(fingerprint(a, none), fingerprint(b, none));
}

TEST(CanonicalJson, SecretsNeverReachTheHash) {
  const auto a = parse(R"({"api_key": "sk-one", "api_key_env": "OPENAI_API_KEY", "auth": {"github_token": "gh-1"}})");
  const auto b = parse(R"({"api_key": "sk-two", "api_key_env": "OPENAI_API_KEY", "auth": {"github_token": "gh-2"}})");
  const auto text = canonical_json(a);
  EXPECT_EQ(text, R"({"api_key":"[redacted]","api_key_env":"OPENAI_API_KEY","auth":{"github_token":"[redacted]"}})");
  EXPECT_EQ(text.find("sk-one"), std::string::npos);
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  // The variable a key is read from is not a secret: naming another one is a change.
  EXPECT_NE(fingerprint(a), fingerprint(parse(R"({"api_key": "sk-one", "api_key_env": "OTHER",
                                                  "auth": {"github_token": "gh-1"}})")));
  EXPECT_TRUE(secret_key("password", {}));
  EXPECT_TRUE(secret_key("db_password", {}));
  EXPECT_TRUE(secret_key("client_secret", {}));
  EXPECT_FALSE(secret_key("api_key_env", {}));
  EXPECT_FALSE(secret_key("key_count", {}));
}

TEST(CanonicalJson, AnEnvironmentCountsByPresenceOnly) {
  fingerprint_rules env;
  env.presence_only = true;
  const auto a = parse(R"({"PATH": "/usr/bin", "GOPATH": "/go"})");
  const auto b = parse(R"({"GOPATH": "/elsewhere", "PATH": "/bin"})");
  EXPECT_EQ(canonical_json(a, env), R"({"GOPATH":true,"PATH":true})");
  EXPECT_EQ(fingerprint(a, env), fingerprint(b, env));
  EXPECT_NE(fingerprint(a, env), fingerprint(parse(R"({"PATH": "/usr/bin"})"), env));  // a variable went
  EXPECT_NE(fingerprint(a), fingerprint(b));  // by value, without the rule
}

TEST(Fingerprint, IsVersionedSha256Hex) {
  const auto f = fingerprint(parse(R"({"model": "m"})"));
  ASSERT_EQ(f.size(), std::string("v1:sha256:").size() + 64);
  EXPECT_TRUE(f.starts_with("v1:sha256:"));
  EXPECT_EQ(f.find_first_not_of("0123456789abcdef", 10), std::string::npos) << f;
  // sha256 of the canonical text {"model":"m"} (printf %s '{"model":"m"}' | sha256sum).
  EXPECT_EQ(f, "v1:sha256:548f58d1c36c715b44f0863472074a97c448d5b8d18164b92adf55592b127f86");
}

// ---- decisions ----

fingerprints session_set(std::string_view model, std::string_view instructions) {
  return {{"runtime", fingerprint(json::value("native"))},
          {"model", fingerprint(json::value(model))},
          {"instructions", fingerprint(json::value(instructions))}};
}

TEST(DecideSession, FreshThenReuseThenResetWithTheChangedCategoriesInOrder) {
  const auto first = session_set("m1", "be brief");
  EXPECT_EQ(decide_session(std::nullopt, first).decision, session_decision::fresh);
  const auto same = decide_session(first, session_set("m1", "be brief"));
  EXPECT_EQ(same.decision, session_decision::reuse);
  EXPECT_TRUE(same.reasons.empty());
  const auto changed = decide_session(first, session_set("m2", "be thorough"));
  EXPECT_EQ(changed.decision, session_decision::reset);
  EXPECT_EQ(changed.reasons, (std::vector<std::string>{"model", "instructions"}));
  // A category on one side only is a change too.
  auto more = first;
  more["secrets"] = fingerprint(json::object{{"OPENAI_API_KEY", true}});
  EXPECT_EQ(decide_session(first, more).reasons, (std::vector<std::string>{"secrets"}));
  EXPECT_EQ(decide_session(more, first).reasons, (std::vector<std::string>{"secrets"}));
}

TEST(DecideWorkspace, CreateReuseRefreshReplace) {
  const fingerprints ws{{"strategy", fingerprint(json::value("clone"))},
                        {"repositories", fingerprint(parse(R"([{"url": "/srv/a.git", "branch": "main"}])"))},
                        {"lifecycle_commands", fingerprint(parse(R"({"setup": ["make deps"]})"))}};
  EXPECT_EQ(decide_workspace(std::nullopt, ws).decision, workspace_decision::create);
  EXPECT_EQ(decide_workspace(ws, ws).decision, workspace_decision::reuse);
  auto setup = ws;
  setup["lifecycle_commands"] = fingerprint(parse(R"({"setup": ["make deps", "make db"]})"));
  const auto refresh = decide_workspace(ws, setup);
  EXPECT_EQ(refresh.decision, workspace_decision::refresh);
  EXPECT_EQ(refresh.reasons, (std::vector<std::string>{"lifecycle_commands"}));
  auto repos = setup;
  repos["repositories"] = fingerprint(parse(R"([{"url": "/srv/a.git", "branch": "dev"}])"));
  const auto replace = decide_workspace(ws, repos);
  EXPECT_EQ(replace.decision, workspace_decision::replace);
  EXPECT_EQ(replace.reasons, (std::vector<std::string>{"repositories", "lifecycle_commands"}));
  auto strategy = ws;
  strategy["strategy"] = fingerprint(json::value("worktree"));
  EXPECT_EQ(decide_workspace(ws, strategy).decision, workspace_decision::replace);
}

TEST(FreshnessJson, RecordsDecisionsReasonsAndBothSets) {
  const auto before = session_set("m1", "x");
  const auto now = session_set("m2", "x");
  const auto v = to_json(decide_session(before, now), before, now, decide_workspace(std::nullopt, {}), std::nullopt, {});
  EXPECT_EQ(v.at("session").at("decision"), "reset");
  EXPECT_EQ(v.at("session").at("reasons"), (json::array{"model"}));
  EXPECT_EQ(v.at("session").at("before").at("model"), json::value(before.at("model")));
  EXPECT_EQ(v.at("session").at("now").at("model"), json::value(now.at("model")));
  EXPECT_EQ(v.at("workspace").at("decision"), "create");
  EXPECT_TRUE(v.at("workspace").at("before").is_null());
}

}  // namespace
}  // namespace tether::work
