#include "cli/line_editor.h"

#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace tether::cli {

namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U; }

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += is_continuation(c) ? 0 : 1;
  return n;
}

// Bytes a UTF-8 sequence starting with `lead` needs in all.
std::size_t utf8_length(char lead) {
  const auto u = static_cast<unsigned char>(lead);
  if (u < 0x80U) return 1;
  if ((u & 0xE0U) == 0xC0U) return 2;
  if ((u & 0xF0U) == 0xE0U) return 3;
  if ((u & 0xF8U) == 0xF0U) return 4;
  return 1;
}

// An escape sequence is complete at its final byte (CSI: 0x40–0x7E).
bool escape_complete(std::string_view seq) {
  if (seq.size() < 2) return false;
  if (seq[1] == '[') return seq.size() >= 3 && seq.back() >= 0x40 && seq.back() <= 0x7E;
  if (seq[1] == 'O') return seq.size() >= 3;
  return true;  // ESC + one byte (Alt-key): ignored
}

}  // namespace

line_editor::line_editor(std::string prompt) : prompt_(std::move(prompt)) {
  if (::isatty(STDIN_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | IEXTEN);
    raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    raw_ = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0;
  }
}

line_editor::~line_editor() {
  if (!raw_) return;
  erase_prompt();
  ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
}

int line_editor::fd() { return STDIN_FILENO; }

void line_editor::write(std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

line_editor::input line_editor::read_available() {
  input in;
  char buf[4096];
  const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return in;
  if (n <= 0) {
    if (!line_.empty()) in.lines.push_back(std::move(line_));
    line_.clear();
    cursor_ = 0;
    in.eof = true;
    return in;
  }
  for (ssize_t i = 0; i < n; ++i) feed_byte(buf[i], in);
  if (raw_) redraw();
  return in;
}

void line_editor::feed_byte(char c, input& in) {
  if (!raw_) {
    if (c == '\n') {
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      in.lines.push_back(std::move(line_));
      line_.clear();
    } else {
      line_ += c;
    }
    return;
  }
  if (!pending_.empty()) {
    pending_ += c;
    if (pending_[0] == '\x1b') {
      if (escape_complete(pending_)) {
        key(pending_, in);
        pending_.clear();
      }
    } else if (pending_.size() >= utf8_length(pending_[0])) {
      key(pending_, in);
      pending_.clear();
    }
    return;
  }
  if (c == '\x1b' || utf8_length(c) > 1) {
    pending_ = std::string(1, c);
    return;
  }
  key(std::string_view(&c, 1), in);
}

void line_editor::key(std::string_view seq, input& in) {
  const auto prev_cp = [&] {
    std::size_t p = cursor_;
    while (p > 0 && is_continuation(line_[--p])) {
    }
    return p;
  };
  const auto next_cp = [&] {
    std::size_t p = cursor_;
    if (p < line_.size()) ++p;
    while (p < line_.size() && is_continuation(line_[p])) ++p;
    return p;
  };
  if (seq == "\r" || seq == "\n") {
    if (!line_.empty() && (history_.empty() || history_.back() != line_)) history_.push_back(line_);
    history_pos_ = history_.size();
    draft_.clear();
    erase_prompt();
    // The typed line stays on screen, as a terminal would leave it.
    write(prompt_ + line_ + "\n");
    output_at_col0_ = true;
    in.lines.push_back(std::move(line_));
    line_.clear();
    cursor_ = 0;
  } else if (seq == "\x7f" || seq == "\b") {
    if (cursor_ > 0) {
      const auto p = prev_cp();
      line_.erase(p, cursor_ - p);
      cursor_ = p;
    }
  } else if (seq == "\x1b[3~" || (seq == "\x04" && !line_.empty())) {
    if (cursor_ < line_.size()) line_.erase(cursor_, next_cp() - cursor_);
  } else if (seq == "\x04") {
    in.eof = true;
  } else if (seq == "\x01" || seq == "\x1b[H" || seq == "\x1bOH" || seq == "\x1b[1~") {
    cursor_ = 0;
  } else if (seq == "\x05" || seq == "\x1b[F" || seq == "\x1bOF" || seq == "\x1b[4~") {
    cursor_ = line_.size();
  } else if (seq == "\x1b[D" || seq == "\x1bOD" || seq == "\x02") {
    cursor_ = prev_cp();
  } else if (seq == "\x1b[C" || seq == "\x1bOC" || seq == "\x06") {
    cursor_ = next_cp();
  } else if (seq == "\x1b[A" || seq == "\x1bOA" || seq == "\x10") {
    history_move(-1);
  } else if (seq == "\x1b[B" || seq == "\x1bOB" || seq == "\x0e") {
    history_move(+1);
  } else if (seq == "\x15") {
    line_.clear();
    cursor_ = 0;
  } else if (seq == "\x0b") {
    line_.erase(cursor_);
  } else if (seq.size() == 1 && static_cast<unsigned char>(seq[0]) < 0x20) {
    // other control keys: ignored
  } else if (seq[0] != '\x1b') {
    line_.insert(cursor_, seq);
    cursor_ += seq.size();
  }
}

void line_editor::history_move(int delta) {
  if (history_.empty()) return;
  if (history_pos_ == history_.size()) draft_ = line_;
  if (delta < 0 && history_pos_ > 0) --history_pos_;
  if (delta > 0 && history_pos_ < history_.size()) ++history_pos_;
  line_ = history_pos_ == history_.size() ? draft_ : history_[history_pos_];
  cursor_ = line_.size();
}

void line_editor::erase_prompt() {
  if (!visible_) return;
  write("\r\x1b[K");
  visible_ = false;
}

void line_editor::redraw() {
  if (!raw_) return;
  const bool show = want_visible_ || !line_.empty();
  if (!show) {
    erase_prompt();
    return;
  }
  std::string out;
  if (!visible_ && !output_at_col0_) {
    out += "\n";  // output stopped mid-line; the prompt goes below it
    output_at_col0_ = true;
  }
  out += "\r\x1b[K" + prompt_ + line_;
  const auto after = code_points(std::string_view(line_).substr(cursor_));
  if (after > 0) out += fmt::format("\x1b[{}D", after);
  write(out);
  visible_ = true;
}

void line_editor::print(std::string_view text) {
  if (text.empty()) return;
  if (!raw_) {
    write(text);
    return;
  }
  erase_prompt();
  write(text);
  output_at_col0_ = text.back() == '\n';
  if (want_visible_ || !line_.empty()) redraw();
}

void line_editor::set_prompt_visible(bool visible) {
  want_visible_ = visible;
  if (!raw_ || (visible || !line_.empty()) == visible_) return;  // already drawn as it should be
  redraw();
}

}  // namespace tether::cli
