// line_editor: the input line of `tether chat`, fed from poll() so the
// terminal and a session's event stream are served on one thread.
//
//   line_editor ed("> ");
//   poll({ed.fd(), stream_fd}) …
//   auto in = ed.read_available();   // when stdin is readable
//   for (auto& line : in.lines) handle(line);
//   ed.print("assistant: …");        // output appears above the edit line
//
// On a terminal, stdin is switched to raw mode (no echo, no canonical
// lines; ISIG stays on, so Ctrl-C is still SIGINT) until destruction, and
// the editor draws the prompt itself. Keys: printable text (UTF-8), Enter,
// Backspace, Delete, Left/Right, Home/End, Ctrl-A/Ctrl-E (start/end),
// Ctrl-U (clear), Ctrl-K (cut to the end), Up/Down (history of this
// session), Ctrl-D on an empty line (end of input). The line is redrawn
// whole, so a line longer than the terminal is wide is not drawn well; wide
// characters count as one column.
//
// When stdin is not a terminal (a pipe, a file), lines are read as they
// are, with no prompt and no escape handling, so chat can be scripted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <termios.h>

namespace tether::cli {

class line_editor {
 public:
  explicit line_editor(std::string prompt);
  ~line_editor();
  line_editor(const line_editor&) = delete;
  line_editor& operator=(const line_editor&) = delete;

  [[nodiscard]] bool interactive() const { return raw_; }
  [[nodiscard]] static int fd();

  struct input {
    std::vector<std::string> lines;  // completed lines, without the newline
    bool eof = false;                // Ctrl-D on an empty line, or stdin closed
  };
  // Reads what stdin has (call when it is readable) and applies it.
  input read_available();

  // Writes `text` to stdout above the edit line.
  void print(std::string_view text);
  // Shows or hides the prompt line (hidden while a turn streams and the
  // user has typed nothing).
  void set_prompt_visible(bool visible);
  [[nodiscard]] bool empty() const { return line_.empty(); }

 private:
  void key(std::string_view seq, input& in);
  void feed_byte(char c, input& in);
  void redraw();
  void erase_prompt();
  void write(std::string_view s);
  void history_move(int delta);

  std::string prompt_;
  bool raw_ = false;
  termios saved_{};
  std::string line_;
  std::size_t cursor_ = 0;  // byte offset in line_, on a code point boundary
  std::string pending_;     // an escape sequence or UTF-8 character still arriving
  std::vector<std::string> history_;
  std::size_t history_pos_ = 0;
  std::string draft_;     // the line being typed when history browsing began
  bool visible_ = false;  // the prompt line is drawn
  bool want_visible_ = true;
  bool output_at_col0_ = true;  // the last output ended with a newline
};

}  // namespace tether::cli
