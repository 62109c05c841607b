// The answer check (model/questions.h) on an arbitrary question payload and
// answer body.
//
// Input: the question payload's JSON text, a NUL byte, the answer body's
// JSON text. Invariants: no exception escapes; an accepted answer is
// {"answers": the body's answers} and is accepted again as it is (the check
// is idempotent), and every question of the payload is answered in it.
#include <string>

#include <boost/json.hpp>

#include "fuzz_support.h"
#include "model/questions.h"

namespace json = boost::json;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto nul = in.find('\0');
  if (nul == std::string_view::npos) return 0;
  boost::system::error_code ec;
  const json::value question = json::parse(in.substr(0, nul), ec);
  if (ec) return 0;
  const json::value body = json::parse(in.substr(nul + 1), ec);
  if (ec) return 0;

  auto r = tether::model::check_answer(question, body);
  if (!r) return 0;
  FUZZ_CHECK(r->is_object() && r->as_object().size() == 1);
  FUZZ_CHECK(r->as_object().at("answers") == body.as_object().at("answers"));
  auto again = tether::model::check_answer(question, *r);
  FUZZ_CHECK(again.has_value() && *again == *r);

  const auto* qs = question.is_object() ? question.as_object().if_contains("questions") : nullptr;
  if (qs == nullptr || !qs->is_array()) return 0;
  for (const auto& q : qs->as_array()) {
    if (!q.is_object() || !q.as_object().contains("id") || !q.as_object().at("id").is_string()) continue;
    bool answered = false;
    for (const auto& a : r->as_object().at("answers").as_array())
      answered = answered || a.as_object().at("question_id") == q.as_object().at("id");
    FUZZ_CHECK(answered);
  }
  return 0;
}
