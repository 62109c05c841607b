#include "config/config.h"

#include "config/with_kinds.h"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

namespace tether::config {
namespace {

using runtime::agent::agent_permissions;
using runtime::native::parse_provider;
using runtime::native::wire_api;
using test::agent;
using test::load;
using test::native;
using test::parse;

TEST(config, no_file_gives_a_default_profile_on_the_scripted_model) {
  ::unsetenv("TETHER_CONFIG");
  auto s = load(std::nullopt);
  ASSERT_TRUE(s) << s.error().describe();
  auto p = s->find("default");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->scripted());
  EXPECT_EQ(p->runtime, "native");
  EXPECT_EQ(native(*p).provider, wire_api::openai_chat);
}

TEST(config, a_profile_reads_every_key) {
  auto s = parse(R"(
data_dir = "/srv/tether"
[profiles.claude]
runtime = "native"
provider = "anthropic"
base_url = "https://api.anthropic.com/v1"
model = "claude-sonnet-4-20250514"
api_key_env = "ANTHROPIC_API_KEY"
ca_file = "/etc/tether/ca.pem"
max_steps = 12
context_window = 200000
)");
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(s->data_dir, "/srv/tether");
  auto p = s->find("claude");
  ASSERT_TRUE(p);
  EXPECT_EQ(native(*p).provider, wire_api::anthropic);
  EXPECT_EQ(p->base_url, "https://api.anthropic.com/v1");
  EXPECT_EQ(p->model, "claude-sonnet-4-20250514");
  EXPECT_EQ(p->api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(p->ca_file, "/etc/tether/ca.pem");
  EXPECT_EQ(native(*p).max_steps, 12);
  EXPECT_EQ(native(*p).context_window, 200000);
  EXPECT_FALSE(p->scripted());
  EXPECT_TRUE(s->find("default")) << "the default profile stays available";
}

TEST(config, workspace_roots_are_absolute_paths_and_absent_means_the_defaults) {
  auto none = parse("");
  ASSERT_TRUE(none) << none.error().describe();
  EXPECT_FALSE(none->workspace_roots.has_value());
  auto some = parse(R"(workspace_roots = ["/srv/repos", "/home/me/work"])");
  ASSERT_TRUE(some) << some.error().describe();
  ASSERT_TRUE(some->workspace_roots.has_value());
  EXPECT_EQ(*some->workspace_roots, (std::vector<std::filesystem::path>{"/srv/repos", "/home/me/work"}));
  auto empty = parse("workspace_roots = []");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->workspace_roots->empty());
  auto relative = parse(R"(workspace_roots = ["repos"])");
  ASSERT_FALSE(relative);
  EXPECT_NE(relative.error().message.find("workspace_roots"), std::string::npos) << relative.error().message;
  EXPECT_FALSE(parse(R"(workspace_roots = "/srv")"));
  EXPECT_FALSE(parse(R"(workspace_roots = [1])"));
}

TEST(config, the_store_and_the_leases_default_to_sqlite_and_thirty_seconds) {
  auto none = parse("");
  ASSERT_TRUE(none) << none.error().describe();
  EXPECT_EQ(none->store, "");
  EXPECT_EQ(none->leases.ttl_ms, 30'000);
  EXPECT_EQ(none->leases.renew_ms, 10'000);
  EXPECT_EQ(none->leases.scan_ms, 0) << "the node's default";
  auto shared = parse(R"(
store = "postgresql://tether@db/tether"
leases = { ttl_ms = 6000, scan_ms = 250 }
)");
  ASSERT_TRUE(shared) << shared.error().describe();
  EXPECT_EQ(shared->store, "postgresql://tether@db/tether");
  EXPECT_EQ(shared->leases.ttl_ms, 6'000);
  EXPECT_EQ(shared->leases.renew_ms, 2'000) << "a third of the lease when not given";
  EXPECT_EQ(shared->leases.scan_ms, 250);
}

TEST(config, leases_that_cannot_work_are_errors_naming_the_key) {
  for (const char* bad : {"[leases]\nttl_ms = 1000\nrenew_ms = 1000\n", "[leases]\nttl_ms = 10\n",
                          "[leases]\nttl_ms = \"long\"\n", "[leases]\nttl = 5000\n", "store = 5\n"}) {
    auto s = parse(bad);
    ASSERT_FALSE(s) << bad;
    const auto& m = s.error().message;
    EXPECT_TRUE(m.find("leases") != std::string::npos || m.find("store") != std::string::npos) << bad << ": " << m;
  }
}

TEST(config, a_typo_in_a_key_is_an_error_naming_it) {
  auto s = parse("[profiles.default]\nmodle = \"gpt-4o\"\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("modle"), std::string::npos) << s.error().message;
}

TEST(config, wrong_types_and_values_are_errors_naming_the_key) {
  for (const char* text : {"[profiles.a]\nmax_steps = \"ten\"\n", "[profiles.a]\nprovider = \"gemini\"\n",
                           "[profiles.a]\nbase_url = \"ftp://x\"\n", "[profiles.a]\nruntime = \"codex-server\"\n",
                           "[profiles.a]\nmax_steps = 0\n", "profiles = 3\n", "data_dir = 5\n",
                           "[profiles.a]\nca_file = \"certs/ca.pem\"\n"}) {
    SCOPED_TRACE(text);
    auto s = parse(text);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), util_errc::invalid_argument);
  }
}

TEST(config, an_unknown_runtime_is_refused_by_name_listing_the_known_kinds) {
  auto s = parse("[profiles.a]\nruntime = \"codex-server\"\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("profiles.a.runtime: \"codex-server\" is not a runtime (known: acp, acp-claude, "
                                   "acp-codex, acp-opencode, claude, claude-print, codex, codex-exec, native, "
                                   "opencode, opencode-run)"),
            std::string::npos)
      << s.error().message;
}

TEST(config, agent_profiles_take_their_own_keys) {
  auto s = parse(
      "[profiles.c]\nruntime = \"codex-exec\"\nmodel = \"gpt-5.5\"\nbase_url = \"https://api.openai.com/v1\"\n"
      "api_key_env = \"OPENAI_API_KEY\"\npermissions = \"approve-reads\"\nargs = [\"--x\"]\nenv = [\"GOPATH\"]\n"
      "set_env = { FOO = \"bar\" }\nidle_timeout_ms = 5000\ncommand = \"/opt/codex\"\n"
      "[profiles.o]\nruntime = \"opencode-run\"\nwire = \"responses\"\n");
  ASSERT_TRUE(s) << s.error().message;
  const auto c = *s->find("c");
  EXPECT_EQ(c.runtime, "codex-exec");
  EXPECT_EQ(c.model, "gpt-5.5");
  EXPECT_EQ(agent(c).permissions, agent_permissions::approve_reads);
  EXPECT_EQ(agent(c).args, std::vector<std::string>{"--x"});
  EXPECT_EQ(c.env, std::vector<std::string>{"GOPATH"});
  EXPECT_EQ(agent(c).set_env.at("FOO"), "bar");
  EXPECT_EQ(agent(c).idle_timeout_ms, 5000);
  EXPECT_EQ(agent(c).command, "/opt/codex");
  EXPECT_EQ(agent(*s->find("o")).wire, "responses");
}

TEST(config, warm_agent_profiles_take_a_keep_alive_and_a_process_bound) {
  auto s = parse(
      "[profiles.w]\nruntime = \"acp-opencode\"\nwire = \"responses\"\nkeep_alive_ms = 1000\nmax_processes = 2\n"
      "start_timeout_ms = 5000\n"
      "[profiles.d]\nruntime = \"claude\"\n"
      "[profiles.any]\nruntime = \"acp\"\ncommand = \"/opt/agent\"\n");
  ASSERT_TRUE(s) << s.error().message;
  const auto w = *s->find("w");
  EXPECT_EQ(agent(w).keep_alive_ms, 1000);
  EXPECT_EQ(agent(w).max_processes, 2);
  EXPECT_EQ(agent(w).start_timeout_ms, 5000);
  EXPECT_EQ(agent(*s->find("d")).start_timeout_ms, 120'000) << "the default";
  EXPECT_EQ(agent(w).wire, "responses");
  EXPECT_EQ(agent(*s->find("d")).keep_alive_ms, 600'000) << "the default";
  EXPECT_EQ(agent(*s->find("d")).max_processes, 8) << "the default";
  EXPECT_EQ(agent(*s->find("any")).command, "/opt/agent");
}

TEST(config, agent_profiles_refuse_native_keys_and_bad_values_by_name) {
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"runtime = \"codex-exec\"\nprovider = \"anthropic\"\n",
            "provider: \"anthropic\": an agent profile takes only \"scripted\""},
           {"runtime = \"claude-print\"\nwire = \"chat\"\n", "unknown key \"wire\" for runtime \"claude-print\""},
           {"runtime = \"opencode-run\"\nwire = \"grpc\"\n", "wire: \"grpc\" is not a wire format"},
           {"runtime = \"codex-exec\"\npermissions = \"yolo\"\n", "permissions: \"yolo\" is not one of"},
           {"runtime = \"codex-exec\"\nset_env = { FOO = 1 }\n", "set_env must be a table"},
           {"runtime = \"codex-exec\"\nenv = [\"A-B\"]\n", "env: every entry must be a variable name"},
           {"runtime = \"codex-exec\"\nidle_timeout_ms = 5\n", "idle_timeout_ms must be at least 100"},
           {"runtime = \"codex-exec\"\nkeep_alive_ms = 1000\n",
            "unknown key \"keep_alive_ms\" for runtime \"codex-exec\""},
           {"runtime = \"codex\"\nkeep_alive_ms = 5\n", "keep_alive_ms must be at least 100"},
           {"runtime = \"claude\"\nmax_processes = 0\n", "max_processes must be at least 1"},
           {"runtime = \"claude-print\"\nstart_timeout_ms = 1000\n",
            "unknown key \"start_timeout_ms\" for runtime \"claude-print\""},
           {"runtime = \"codex\"\nstart_timeout_ms = 50\n", "start_timeout_ms must be at least 100"},
           {"runtime = \"acp\"\n", "runtime \"acp\" needs the ACP agent's command"},
           {"runtime = \"native\"\nsandbox = \"contain\"\n", "is not a sandbox mode"},
       }) {
    auto s = parse("[profiles.a]\n" + text);
    ASSERT_FALSE(s) << text;
    EXPECT_NE(s.error().message.find(needle), std::string::npos) << s.error().message;
  }
}

TEST(config, a_key_of_another_runtime_kind_is_refused_naming_the_key_and_the_kind) {
  auto s = parse("[profiles.a]\nruntime = \"native\"\nbinary = \"/usr/bin/codex\"\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("unknown key \"binary\" for runtime \"native\""), std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("provider"), std::string::npos) << "the native keys are listed";
}

TEST(config, native_is_the_default_and_first_runtime_kind) {
  const auto kinds = runtime::config_kinds();
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front().name, "native");
  auto s = parse("[profiles.a]\nmodel = \"m\"\n");
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(s->find("a")->runtime, "native");
}

TEST(config, malformed_toml_names_the_line) {
  auto s = parse("data_dir = \"x\"\n[profiles.a\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("line 2"), std::string::npos) << s.error().message;
}

TEST(config, an_unknown_profile_lists_the_known_ones) {
  auto s = parse("[profiles.fast]\nmodel = \"m\"\n");
  ASSERT_TRUE(s);
  auto p = s->find("slow");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("fast"), std::string::npos);
  EXPECT_NE(p.error().message.find("default"), std::string::npos);
}

TEST(config, prices_are_read_by_model_with_cached_input_defaulting_to_input) {
  auto s = parse(
      "[prices.\"my-model\"]\ninput = 1.0\noutput = 2.0\n[prices.\"gpt-4o\"]\ninput = 2\noutput = 8\n"
      "cached_input = 0.5\n");
  ASSERT_TRUE(s) << s.error().describe();
  ASSERT_EQ(s->prices.size(), 2U) << "only the file's: the runtimes lay them over their shipped table";
  EXPECT_EQ(s->prices.at("my-model"), (price{1.0, 2.0, 1.0}));
  EXPECT_EQ(s->prices.at("gpt-4o"), (price{2.0, 8.0, 0.5}));
  auto bad = parse("[prices.\"m\"]\ninput = 1\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("\"m\" has no output"), std::string::npos) << bad.error().message;
}

// The configuration knows no kind: a kind brings its keys, its reader and
// its official URL, and its profiles keep what it read.
TEST(config, a_kind_plugs_in_its_keys_reader_and_official_url) {
  struct flavoured {
    std::string flavour;
  };
  const std::vector<kind_keys> kinds{
      {"plain", {"model"}, nullptr, nullptr},
      {"flavoured",
       {"flavour", "model", "api_key_env"},
       [](profile& p, const table_reader& t) -> result<void> {
         auto f = t.text("flavour", "vanilla");
         if (!f) return f.error();
         if (*f == "durian") return t.bad("flavour", ": \"durian\" is not served here");
         p.kind_settings<flavoured>().flavour = *f;
         return ok();
       },
       [](const profile&) { return std::string("https://models.example/v1"); }},
  };
  auto s = config::parse(
      "[profiles.a]\nruntime = \"flavoured\"\nflavour = \"mint\"\nmodel = \"m1\"\n"
      "[profiles.b]\nruntime = \"flavoured\"\n",
      kinds);
  ASSERT_TRUE(s) << s.error().describe();
  const auto a = *s->find("a");
  EXPECT_EQ(a.kind_settings<flavoured>().flavour, "mint");
  EXPECT_FALSE(a.scripted()) << "a model named is a real one";
  EXPECT_EQ(a.base_url, "https://models.example/v1") << "the kind's official URL";
  EXPECT_EQ(a.api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(s->find("b")->kind_settings<flavoured>().flavour, "vanilla");
  EXPECT_TRUE(s->find("b")->scripted());
  EXPECT_EQ(s->find("default")->runtime, "plain") << "the first kind is the default";

  auto refused = config::parse("[profiles.a]\nruntime = \"flavoured\"\nflavour = \"durian\"\n", kinds);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("profiles.a.flavour: \"durian\" is not served here"), std::string::npos)
      << refused.error().message;
  auto foreign = config::parse("[profiles.a]\nruntime = \"plain\"\nflavour = \"mint\"\n", kinds);
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("unknown key \"flavour\" for runtime \"plain\""), std::string::npos)
      << foreign.error().message;
  auto unknown = config::parse("[profiles.a]\nruntime = \"native\"\n", kinds);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("(known: flavoured, plain)"), std::string::npos) << unknown.error().message;
}

TEST(config, the_file_named_by_TETHER_CONFIG_is_read) {
  const auto path = std::filesystem::temp_directory_path() / ("tether-config-" + std::to_string(::getpid()) + ".toml");
  { std::ofstream(path) << "[profiles.env]\nmodel = \"from-env\"\n"; }
  ::setenv("TETHER_CONFIG", path.c_str(), 1);
  auto s = load(std::nullopt);
  ::unsetenv("TETHER_CONFIG");
  std::filesystem::remove(path);
  ASSERT_TRUE(s) << s.error().describe();
  ASSERT_TRUE(s->find("env"));
  EXPECT_EQ(s->find("env")->model, "from-env");
  auto missing = load(std::filesystem::path("/nonexistent/tether.toml"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/tether.toml"), std::string::npos);
}

// Which model answers: the scripted one only when chosen or when nothing
// about the model is configured.
TEST(config, a_named_provider_without_a_base_url_gets_its_official_url_not_the_scripted_model) {
  auto s = parse(
      "[profiles.a]\nprovider = \"anthropic\"\nmodel = \"claude-x\"\n"
      "[profiles.o]\nprovider = \"openai-responses\"\nmodel = \"gpt-x\"\n"
      "[profiles.m]\nmodel = \"gpt-y\"\n"
      "[profiles.c]\nruntime = \"claude\"\nmodel = \"claude-y\"\n"
      "[profiles.oc]\nruntime = \"opencode\"\nwire = \"messages\"\nmodel = \"claude-z\"\n");
  ASSERT_TRUE(s) << s.error().message;
  const auto a = *s->find("a");
  EXPECT_FALSE(a.scripted());
  EXPECT_EQ(a.base_url, "https://api.anthropic.com/v1");
  EXPECT_EQ(a.api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(model_label(a), "claude-x at https://api.anthropic.com/v1");
  const auto o = *s->find("o");
  EXPECT_FALSE(o.scripted());
  EXPECT_EQ(o.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(o.api_key_env, "OPENAI_API_KEY");
  EXPECT_FALSE(s->find("m")->scripted()) << "a model named is a real one";
  EXPECT_EQ(s->find("m")->base_url, "https://api.openai.com/v1");
  EXPECT_EQ(s->find("c")->base_url, "https://api.anthropic.com") << "what claude speaks";
  EXPECT_EQ(s->find("oc")->base_url, "https://api.anthropic.com/v1");
}

TEST(config, a_real_provider_must_name_its_model) {
  for (const std::string text :
       {"provider = \"anthropic\"\n",
        "base_url = \"http://127.0.0.1:9/v1\"\nprovider = \"openai-chat\"\nmodel = \"scripted\"\n",
        "runtime = \"codex\"\nprovider = \"anthropic\"\n"}) {
    auto s = parse("[profiles.a]\n" + text);
    if (text.find("127.0.0.1") != std::string::npos) {
      ASSERT_TRUE(s) << "a base_url names where; the model may be anything it serves";
      EXPECT_FALSE(s->find("a")->scripted());
      continue;
    }
    ASSERT_FALSE(s) << text;
    EXPECT_TRUE(s.error().message.find("name the model") != std::string::npos ||
                s.error().message.find("takes only \"scripted\"") != std::string::npos)
        << s.error().message;
  }
}

TEST(config, provider_scripted_chooses_the_scripted_model_and_takes_no_url) {
  auto s = parse("[profiles.a]\nprovider = \"scripted\"\n[profiles.b]\nruntime = \"codex\"\nprovider = \"scripted\"\n");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->find("a")->scripted());
  EXPECT_TRUE(s->find("b")->scripted());
  EXPECT_EQ(model_label(*s->find("a")), "scripted");
  auto bad = parse("[profiles.a]\nprovider = \"scripted\"\nbase_url = \"https://api.openai.com/v1\"\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("provider \"scripted\" takes none"), std::string::npos) << bad.error().message;
}

TEST(config, the_default_data_dir_is_the_users_data_directory) {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const std::string saved = xdg != nullptr ? xdg : "";
  const std::string home = std::getenv("HOME") != nullptr ? std::getenv("HOME") : "";
  ::setenv("XDG_DATA_HOME", "/srv/xdg", 1);
  EXPECT_EQ(default_data_dir(), "/srv/xdg/tether");
  ::setenv("XDG_DATA_HOME", "relative/ignored", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_data_dir(), "/home/u/.local/share/tether");
  ::setenv("HOME", home.c_str(), 1);
  if (xdg != nullptr)
    ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_DATA_HOME");
}

// One reading of a provider's name for the file and for `tether run --provider`.
TEST(config, parse_provider_names_the_scripted_model_or_a_wire_api) {
  auto scripted = parse_provider("scripted");
  ASSERT_TRUE(scripted);
  EXPECT_FALSE(scripted->has_value());
  auto anthropic = parse_provider("anthropic");
  ASSERT_TRUE(anthropic);
  EXPECT_EQ(**anthropic, wire_api::anthropic);
  EXPECT_EQ(**parse_provider("openai-responses"), wire_api::openai_responses);
  auto bad = parse_provider("claude");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "\"claude\" is not a provider (openai-chat, openai-responses, anthropic, scripted)");
}

}  // namespace
}  // namespace tether::config
