#include "runtime/registry.h"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "util/errors.h"

namespace tether::runtime {
namespace {

namespace asio = boost::asio;

// What happened to every runtime, in order ("<profile> start", …).
using journal = std::vector<std::string>;

// A runtime that writes each call into the journal.
class recording_runtime final : public session::runtime {
 public:
  recording_runtime(std::string profile, std::string kind, journal* log, bool fails_to_start)
      : profile_(std::move(profile)), kind_(std::move(kind)), log_(log), fails_to_start_(fails_to_start) {}

  [[nodiscard]] std::string name(std::string_view) const override { return kind_; }
  session::task<result<void>> start() override {
    log_->push_back(profile_ + " start");
    if (fails_to_start_) co_return make_error(util_errc::invalid_argument, "the agent binary is missing");
    co_return ok();
  }
  session::task<void> stop() override {
    log_->push_back(profile_ + " stop");
    co_return;
  }
  session::task<void> forget(session_id s) override {
    log_->push_back(profile_ + " forget " + s.str());
    co_return;
  }
  session::task<session::turn_result> run_turn(session::turn_context ctx,
                                               std::shared_ptr<session::turn_host>) override {
    log_->push_back(profile_ + " turn " + ctx.session.str());
    co_return session::turn_result{};
  }

 private:
  std::string profile_;
  std::string kind_;
  journal* log_;
  bool fails_to_start_;
};

config::profile profile_of(std::string name, std::string kind) {
  config::profile p;
  p.name = std::move(name);
  p.runtime = std::move(kind);
  return p;
}

class registry_test : public ::testing::Test {
 protected:
  registry_test() {
    for (const char* kind : {"native", "agent"})
      registry_.add_kind(kind, [this, kind](const config::profile& p) -> result<std::unique_ptr<session::runtime>> {
        built_.push_back(p.name + " as " + kind);
        return std::unique_ptr<session::runtime>(
            std::make_unique<recording_runtime>(p.name, kind, &log_, p.name == failing_));
      });
  }

  template <class T>
  T run(asio::awaitable<T> a) {
    auto f = asio::co_spawn(io_, std::move(a), asio::use_future);
    io_.restart();
    io_.run();
    return f.get();
  }

  session::turn_result turn(std::string profile, const session_id& s) {
    session::turn_context ctx;
    ctx.session = s;
    ctx.profile = std::move(profile);
    return run(registry_.run_turn(std::move(ctx), nullptr));
  }

  asio::io_context io_;
  registry registry_;
  journal log_;
  std::vector<std::string> built_;
  std::string failing_;  // the profile whose runtime fails to start
};

TEST_F(registry_test, each_profile_gets_a_runtime_built_by_the_kind_it_names) {
  ASSERT_TRUE(registry_.add_profile(profile_of("default", "native")));
  ASSERT_TRUE(registry_.add_profile(profile_of("coder", "agent")));
  EXPECT_EQ(built_, (std::vector<std::string>{"default as native", "coder as agent"}));
  EXPECT_EQ(registry_.name("coder"), "agent");
  EXPECT_EQ(registry_.name("default"), "native");
  EXPECT_EQ(registry_.name(""), "native") << "the empty profile is default";
  EXPECT_EQ(registry_.name("missing"), "");
  EXPECT_TRUE(registry_.has_profile(""));
  EXPECT_FALSE(registry_.has_profile("missing"));
}

TEST_F(registry_test, a_profile_naming_a_kind_that_was_not_added_is_refused_listing_the_kinds) {
  auto r = registry_.add_profile(profile_of("claude-profile", "claude"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::invalid_argument);
  EXPECT_NE(r.error().message.find("claude"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("agent, native"), std::string::npos) << r.error().message;
  EXPECT_TRUE(built_.empty());
  EXPECT_FALSE(registry_.has_profile("claude-profile"));
}

TEST_F(registry_test, a_profile_is_added_once) {
  ASSERT_TRUE(registry_.add_profile(profile_of("default", "native")));
  EXPECT_FALSE(registry_.add_profile(profile_of("default", "agent")));
  EXPECT_EQ(registry_.name("default"), "native");
}

TEST_F(registry_test, a_turn_goes_to_the_runtime_of_the_sessions_profile) {
  ASSERT_TRUE(registry_.add_profile(profile_of("default", "native")));
  ASSERT_TRUE(registry_.add_profile(profile_of("coder", "agent")));
  const auto s = session_id::generate();
  EXPECT_EQ(turn("coder", s).status, session::turn_status::completed);
  EXPECT_EQ(turn("", s).status, session::turn_status::completed);
  EXPECT_EQ(log_, (journal{"coder turn " + s.str(), "default turn " + s.str()}));
}

TEST_F(registry_test, a_turn_of_a_profile_without_a_runtime_fails_naming_the_known_profiles) {
  ASSERT_TRUE(registry_.add_profile(profile_of("default", "native")));
  ASSERT_TRUE(registry_.add_profile(profile_of("coder", "agent")));
  const auto r = turn("writer", session_id::generate());
  EXPECT_EQ(r.status, session::turn_status::failed);
  EXPECT_NE(r.error.find("'writer' is not configured (known: coder, default)"), std::string::npos) << r.error;
  EXPECT_TRUE(log_.empty());
}

TEST_F(registry_test, start_stop_and_forget_reach_every_runtime_and_stop_goes_in_reverse) {
  ASSERT_TRUE(registry_.add_profile(profile_of("a", "native")));
  ASSERT_TRUE(registry_.add_profile(profile_of("b", "agent")));
  const auto s = session_id::generate();
  ASSERT_TRUE(run(registry_.start()));
  run(registry_.forget(s));
  run(registry_.stop());
  EXPECT_EQ(log_, (journal{"a start", "b start", "a forget " + s.str(), "b forget " + s.str(), "b stop", "a stop"}));
}

TEST_F(registry_test, a_runtime_that_fails_to_start_stops_the_ones_started_and_names_its_profile) {
  failing_ = "b";
  ASSERT_TRUE(registry_.add_profile(profile_of("a", "native")));
  ASSERT_TRUE(registry_.add_profile(profile_of("b", "agent")));
  ASSERT_TRUE(registry_.add_profile(profile_of("c", "agent")));
  auto r = run(registry_.start());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), util_errc::invalid_argument);
  EXPECT_NE(r.error().message.find("profile b (runtime agent): the agent binary is missing"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(log_, (journal{"a start", "b start", "a stop"})) << "c never started";
}

}  // namespace
}  // namespace tether::runtime
