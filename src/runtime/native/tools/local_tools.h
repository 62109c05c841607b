// The local tools one by one (internal): their factories, the class shared
// by the tools whose work is plain blocking file I/O, schema builders, and
// the directory walk of glob and grep.
#pragma once

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "runtime/native/tools/output.h"
#include "runtime/native/tools/tool.h"

namespace tether::runtime::native::tool_detail {

std::unique_ptr<tool> make_read_tool();
std::unique_ptr<tool> make_write_tool();
std::unique_ptr<tool> make_edit_tool();
std::unique_ptr<tool> make_list_tool();
std::unique_ptr<tool> make_glob_tool();
std::unique_ptr<tool> make_grep_tool();
std::unique_ptr<tool> make_bash_tool();
std::unique_ptr<tool> make_ask_user_tool();

// A tool whose body runs on ctx.blocking (see run_blocking).
class blocking_file_tool final : public tool {
 public:
  blocking_file_tool(tool_spec spec, blocking_tool body) : spec_(std::move(spec)), body_(body) {}
  [[nodiscard]] const tool_spec& spec() const override { return spec_; }
  boost::asio::awaitable<tool_outcome> run(boost::json::value input, tool_context ctx) const override {
    return run_blocking(std::move(input), std::move(ctx), body_);
  }

 private:
  tool_spec spec_;
  blocking_tool body_;
};

// JSON Schema pieces.
boost::json::object string_property(std::string_view description);
boost::json::object integer_property(std::string_view description, std::int64_t minimum);
boost::json::object boolean_property(std::string_view description);
// {"type":"object","properties":…,"required":[…],"additionalProperties":false}
boost::json::object object_schema(boost::json::object properties, std::initializer_list<std::string_view> required);

enum class entry_kind { file, directory, symlink, other };

struct walk_entry {
  std::string relative;  // to the walk's base, '/'-separated
  std::filesystem::path abs;
  entry_kind kind = entry_kind::other;
};

enum class walk_result { finished, stopped };

// Visits every entry under `base` (depth first, in directory order) without
// following symbolic links and without descending into `.git` directories.
// Unreadable directories are skipped. Returns stopped when `stop` was
// requested.
walk_result walk_tree(const std::filesystem::path& base, const std::stop_token& stop,
                      const std::function<void(const walk_entry&)>& visit);

}  // namespace tether::runtime::native::tool_detail
