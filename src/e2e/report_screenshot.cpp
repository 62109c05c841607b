#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

#include "e2e/report.h"
#include "e2e/report_html.h"
#include "process/run_to_end.h"
#include "util/text.h"

namespace tether::e2e {

namespace fs = std::filesystem;

namespace {

constexpr auto chromium_deadline = std::chrono::seconds(60);
constexpr int window_width = 1400;
constexpr int default_height = 2000;  // when the page's height could not be measured
constexpr int max_height = 16'000;    // Chromium's largest capture is about 16k pixels

// $TETHER_CHROMIUM, else `chromium` (or `chromium-browser`) on PATH.
std::optional<fs::path> find_chromium() {
  if (const char* env = std::getenv("TETHER_CHROMIUM"); env && *env) {
    if (process::is_executable(env)) return fs::path(env);
    return std::nullopt;
  }
  for (const char* name : {"chromium", "chromium-browser"})
    if (auto found = process::find_program(name)) return found;
  return std::nullopt;
}

// Runs `argv` through the process layer (its own process group, killed with
// the group at the deadline and once it is done, so no zygote or renderer
// outlives it); its output (stdout and stderr) when it exited 0 in time.
result<std::string> run_chromium(const std::vector<std::string>& argv) {
  process::spawn_options o;
  o.argv = argv;
  o.env = process::inherited_environment();
  auto done = process::run_to_end(std::move(o), {.limit = chromium_deadline, .max_output = 256 * 1024});
  if (!done) return make_error(e2e_errc::io, done.error().message);
  if (done->timed_out)
    return make_error(e2e_errc::io,
                      "Chromium did not finish the screenshot within 60 s; last output: " + last_line(done->output));
  if (!done->status.success())
    return make_error(e2e_errc::io, "Chromium failed (" +
                                        (done->status.signal > 0 ? "signal " + std::to_string(done->status.signal)
                                                                 : "exit " + std::to_string(done->status.code)) +
                                        "): " + last_line(done->output));
  return std::move(done->output);
}

result<void> check_png(const fs::path& png, const std::string& log) {
  static constexpr std::array<unsigned char, 8> signature{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::ifstream in(png, std::ios::binary);
  if (!in) return make_error(e2e_errc::io, "Chromium wrote no " + png.string() + ": " + last_line(log));
  std::array<char, 8> head{};
  in.read(head.data(), head.size());
  for (std::size_t i = 0; i < signature.size(); ++i)
    if (static_cast<unsigned char>(head[i]) != signature[i])
      return make_error(e2e_errc::io, png.string() + " is not a PNG");
  std::error_code ec;
  if (fs::file_size(png, ec) <= 1024 || ec)
    return make_error(e2e_errc::io, png.string() + " is nearly empty (" + last_line(log) + ")");
  return ok();
}

// file:// URL of an absolute path.
std::string file_url(const fs::path& p) { return "file://" + html::url_path(p.string()); }

// The flags of every headless run: no network, no GPU, a 1400-pixel-wide
// window at scale 1 (1400 CSS pixels = 1400 PNG pixels).
std::vector<std::string> headless_argv(const fs::path& chromium, const fs::path& profile, int height) {
  return {
      chromium.string(),
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-extensions",
      "--disable-dev-shm-usage",  // containers often have a tiny /dev/shm
      "--force-device-scale-factor=1",
      "--user-data-dir=" + (profile / "profile").string(),
      "--window-size=" + std::to_string(window_width) + "," + std::to_string(height),
  };
}

// The page's full height at the window's width: a copy of it (in `profile`)
// with one script that writes document.documentElement.scrollHeight into an
// attribute, read back from Chromium's --dump-dom. The page itself carries
// no script. nullopt when that did not work (the caller keeps a default).
std::optional<int> page_height(const fs::path& chromium, const fs::path& profile, const fs::path& page) {
  std::ifstream in(page, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::string_view probe =
      "<script>document.body.setAttribute('data-tether-height', document.documentElement.scrollHeight)</script>";
  const auto body_end = text.rfind("</body>");
  text.insert(body_end == std::string::npos ? text.size() : body_end, probe);
  const fs::path copy = profile / "measure.html";
  {
    std::ofstream out(copy, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return std::nullopt;
  }
  // A short window: scrollHeight is at least the window's height, and the
  // layout at this width does not depend on it (the page has no vh units).
  auto argv = headless_argv(chromium, profile, 100);
  argv.emplace_back("--dump-dom");
  argv.push_back(file_url(copy));
  auto dom = run_chromium(argv);
  if (!dom) return std::nullopt;
  constexpr std::string_view attr = "data-tether-height=\"";
  const auto at = dom->find(attr);
  if (at == std::string::npos) return std::nullopt;
  int height = 0;
  for (std::size_t i = at + attr.size(); i < dom->size() && std::isdigit(static_cast<unsigned char>((*dom)[i])); ++i)
    height = std::min(height * 10 + ((*dom)[i] - '0'), 1'000'000);
  if (height <= 0) return std::nullopt;
  return std::min(height, max_height);
}

}  // namespace

result<void> screenshot(const fs::path& html, const fs::path& png) {
  const auto chromium = find_chromium();
  if (!chromium)
    return make_error(e2e_errc::io, std::getenv("TETHER_CHROMIUM") && *std::getenv("TETHER_CHROMIUM")
                                        ? std::string("$TETHER_CHROMIUM (") + std::getenv("TETHER_CHROMIUM") +
                                              ") is not an executable"
                                        : "Chromium not found on PATH: install Debian's `chromium` package "
                                          "(apt-get install chromium) or set $TETHER_CHROMIUM");
  std::error_code ec;
  const fs::path page = fs::absolute(html, ec);
  if (!fs::exists(page)) return make_error(e2e_errc::io, html.string() + " does not exist");
  const fs::path shot = fs::absolute(png, ec);
  if (shot.has_parent_path()) fs::create_directories(shot.parent_path(), ec);
  fs::remove(shot, ec);

  std::string profile_template = (fs::temp_directory_path(ec) / "tether-chromium-XXXXXX").string();
  if (::mkdtemp(profile_template.data()) == nullptr)
    return make_error(e2e_errc::io, "cannot create a temporary Chromium profile");
  const fs::path profile(profile_template);

  const int height = page_height(*chromium, profile, page).value_or(default_height);
  auto argv = headless_argv(*chromium, profile, height);
  argv.push_back("--screenshot=" + shot.string());
  argv.push_back(file_url(page));
  auto ran = run_chromium(argv);
  auto checked = ran ? check_png(shot, *ran) : result<void>(ran.error());
  fs::remove_all(profile, ec);
  return checked;
}

}  // namespace tether::e2e
