#include "e2e/secrets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

namespace tether::e2e {
namespace {

namespace fs = std::filesystem;

class secrets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tether-secrets-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_ / "cells" / "a");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& rel, const std::string& text) { std::ofstream(dir_ / rel, std::ios::binary) << text; }
  fs::path dir_;
};

const std::string key = "sk-e2e-0123456789abcdef";

TEST_F(secrets, clean_artifacts_have_no_secret) {
  write("cells/a/server.log", "listening on http://127.0.0.1:1234\nauthorization: [redacted]\n");
  write("cells/a/transcript.json", R"({"messages":[]})");
  EXPECT_FALSE(find_secret(dir_, {R"({"status":"passed"})"}, key));
}

TEST_F(secrets, a_key_in_a_nested_log_is_found_and_named) {
  write("cells/a/server.log", "ok\n");
  write("cells/a/model.log", "Authorization: Bearer " + key + "\n");
  auto where = find_secret(dir_, {}, key);
  ASSERT_TRUE(where);
  EXPECT_NE(where->find("model.log"), std::string::npos) << *where;
}

TEST_F(secrets, a_key_in_the_record_is_found) {
  auto where = find_secret(dir_, {"{}", R"({"error":"bad key )" + key + R"("})"}, key);
  ASSERT_TRUE(where);
  EXPECT_EQ(*where, "text 2");
}

TEST_F(secrets, a_key_escaped_inside_json_is_found) {
  const std::string odd = R"(sk-e2e-"quoted"\slash)";
  write("cells/a/transcript.json", R"({"text":"sk-e2e-\"quoted\"\\slash"})");
  EXPECT_TRUE(find_secret(dir_, {}, odd));
}

TEST_F(secrets, a_prefix_of_the_key_is_not_a_leak) {
  write("cells/a/server.log", key.substr(0, key.size() - 1) + "\n");
  EXPECT_FALSE(find_secret(dir_, {}, key));
}

}  // namespace
}  // namespace tether::e2e
