#include "fixture.h"

#include <dirent.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include <boost/json/parse.hpp>

namespace tether::runtime::native::test {

namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace json = boost::json;

tools_test::tools_test() : work_(asio::make_work_guard(io_)), tools_(make_local_tools()) {
  std::string tmpl = (fs::temp_directory_path() / "tether-tools-XXXXXX").string();
  const char* made = ::mkdtemp(tmpl.data());
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = fs::canonical(made);
  ws_ = root_ / "ws";
  outside_ = root_ / "outside";
  fs::create_directories(ws_);
  fs::create_directories(outside_);
  sandbox_.hidden = root_;
  for (int i = 0; i < 2; ++i) io_threads_.emplace_back([this] { io_.run(); });
}

tools_test::~tools_test() {
  work_.reset();
  io_.stop();
  for (auto& t : io_threads_) t.join();
  blocking_.join();
  std::error_code ec;
  fs::remove_all(root_, ec);
}

tool_context tools_test::context() {
  tool_context ctx;
  ctx.workspace = ws_;
  ctx.spill_dir = root_ / "spill";
  ctx.blob_dir = root_ / "blobs";
  ctx.blocking = blocking_.get_executor();
  ctx.call_id = "call_1";
  ctx.limits = limits_;
  ctx.sandbox = sandbox_;
  return ctx;
}

std::future<tool_outcome> tools_test::start(std::string_view name, const json::value& input, const tool_context& ctx) {
  const tool* t = tools_.find(name);
  if (t == nullptr) throw std::runtime_error("no tool " + std::string(name));
  return asio::co_spawn(io_.get_executor(), t->run(input, ctx), asio::use_future);
}

tool_outcome tools_test::call(std::string_view name, const json::value& input, const tool_context& ctx) {
  return start(name, input, ctx).get();
}

tool_outcome tools_test::call(std::string_view name, const json::value& input) {
  return call(name, input, context());
}

tool_outcome tools_test::call_json(std::string_view name, std::string_view json_text) {
  return call(name, json::parse(json_text), context());
}

void tools_test::put(const fs::path& rel, std::string_view content) const { put_at(ws_ / rel, content); }

void tools_test::put_at(const fs::path& abs, std::string_view content) {
  fs::create_directories(abs.parent_path());
  std::ofstream f(abs, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
}

std::string tools_test::slurp(const fs::path& abs) {
  std::ifstream f(abs, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool eventually(const std::function<bool()>& pred, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

namespace {

// State and process group from /proc/<pid>/stat ("pid (comm) S ppid pgrp …").
bool read_stat(const std::string& pid, char& state, long& pgrp) {
  std::ifstream f("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  long ppid = 0;
  return static_cast<bool>(rest >> state >> ppid >> pgrp);
}

}  // namespace

bool process_alive(pid_t pid) {
  char state = 0;
  long pgrp = 0;
  return read_stat(std::to_string(pid), state, pgrp) && state != 'Z';
}

bool group_alive(pid_t pgid) {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return false;
  bool alive = false;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    char state = 0;
    long pgrp = 0;
    if (read_stat(name, state, pgrp) && pgrp == pgid && state != 'Z') alive = true;
  }
  ::closedir(d);
  return alive;
}

json::object args(std::initializer_list<std::pair<std::string_view, json::value>> kv) {
  json::object o;
  for (const auto& [k, v] : kv) o[k] = v;
  return o;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace tether::runtime::native::test
