#include "http/sse_parser.h"

#include <charconv>

namespace tether::http {

namespace {
constexpr std::string_view bom = "\xEF\xBB\xBF";
}

std::vector<sse_event> sse_parser::feed(std::string_view chunk) {
  std::vector<sse_event> out;
  // The BOM may itself arrive split across chunks.
  while (at_start_ && !chunk.empty()) {
    if (chunk.front() == bom[bom_seen_]) {
      chunk.remove_prefix(1);
      if (++bom_seen_ == bom.size()) at_start_ = false;
      continue;
    }
    at_start_ = false;
    line_.append(bom.substr(0, bom_seen_));  // not a BOM after all
  }
  if (after_cr_ && !chunk.empty()) {
    after_cr_ = false;
    if (chunk.front() == '\n') chunk.remove_prefix(1);
  }
  while (!chunk.empty()) {
    const auto eol = chunk.find_first_of("\r\n");
    if (eol == std::string_view::npos) {
      line_.append(chunk);
      break;
    }
    if (line_.empty()) {
      on_line(chunk.substr(0, eol), out);
    } else {
      line_.append(chunk.substr(0, eol));
      const std::string line = std::move(line_);
      line_.clear();
      on_line(line, out);
    }
    const bool cr = chunk[eol] == '\r';
    chunk.remove_prefix(eol + 1);
    if (cr) {
      if (chunk.empty())
        after_cr_ = true;
      else if (chunk.front() == '\n')
        chunk.remove_prefix(1);
    }
  }
  return out;
}

void sse_parser::on_line(std::string_view line, std::vector<sse_event>& out) {
  if (line.empty()) {
    if (have_data_) {
      sse_event ev;
      ev.event = std::move(event_);
      ev.data = std::move(data_);
      ev.id = last_id_;
      ev.own_id = own_id_;
      out.push_back(std::move(ev));
    }
    event_.clear();
    data_.clear();
    have_data_ = false;
    own_id_ = false;
    pending_ = false;
    return;
  }
  if (line.front() == ':') {  // a comment (keep-alive, "OPENROUTER PROCESSING", …)
    ++comments_;
    return;
  }
  pending_ = true;
  std::string_view field = line;
  std::string_view value;
  if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (have_data_) data_.push_back('\n');
    data_.append(value);
    have_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      last_id_.assign(value);
      own_id_ = true;
    }
  } else if (field == "retry") {
    std::int64_t ms = 0;
    const auto* end = value.data() + value.size();
    auto [p, ec] = std::from_chars(value.data(), end, ms);
    if (ec == std::errc{} && p == end && !value.empty() && value.front() != '-') retry_ms_ = ms;
  }
}

bool sse_parser::finish() {
  const bool partial = pending_ || !line_.empty();
  line_.clear();
  event_.clear();
  data_.clear();
  have_data_ = false;
  own_id_ = false;
  pending_ = false;
  after_cr_ = false;
  return partial;
}

}  // namespace tether::http
