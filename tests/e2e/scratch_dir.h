// A temporary directory for one test, removed with everything in it at the end.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

namespace tether::e2e::test {

class scratch_dir {
 public:
  explicit scratch_dir(const std::string& tag = "qualification-test") {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("tether-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tether::e2e::test
