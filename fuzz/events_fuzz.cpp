// The event catalogue's decoder (model/events.h) on arbitrary stored rows.
//
// Input: one byte picks the event type (every type of the catalogue, or an
// unknown name), one byte the version, the rest is the row's `data` as JSON
// text. Invariants:
//   - decode() answers a value or an error, nothing else escapes;
//   - what decodes re-encodes, and the encoding decodes again (at the current
//     version) to the same encoding — also after a trip through JSON text;
//   - decode_usage() of any JSON value, and adding two decoded usages, is
//     defined behaviour.
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <boost/json.hpp>

#include "fuzz_support.h"
#include "model/events.h"

namespace {

namespace json = boost::json;
namespace model = tether::model;

template <std::size_t... I>
constexpr auto type_names(std::index_sequence<I...>) {
  return std::array<std::string_view, sizeof...(I)>{std::variant_alternative_t<I, model::payload>::name...};
}
constexpr auto names = type_names(std::make_index_sequence<std::variant_size_v<model::payload>>{});

void check_round_trip(const model::payload& p) {
  const json::object encoded = model::encode(p);
  auto again = model::decode(model::type_name(p), model::type_version(p), encoded);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(model::type_name(*again) == model::type_name(p));
  FUZZ_CHECK(model::encode(*again) == encoded);

  boost::system::error_code ec;
  const json::value text_trip = json::parse(json::serialize(encoded), ec);
  FUZZ_CHECK(!ec && text_trip.is_object());
  auto from_text = model::decode(model::type_name(p), model::type_version(p), text_trip.as_object());
  FUZZ_CHECK(from_text.has_value());
  // Boost.JSON 1.81 parses some doubles one ulp off what it serialized, so the
  // text trip is compared with the text, not with the original numbers.
  FUZZ_CHECK(model::encode(*from_text) == text_trip.as_object());

  model::event e;
  e.body = p;
  (void)json::serialize(model::to_json(e));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tether::fuzz::input_reader in(data, size);
  const std::uint8_t pick = in.byte();
  const int version = in.byte() % 4;
  const std::string_view type = pick < names.size() ? names[pick] : std::string_view("no.such.type");

  boost::system::error_code ec;
  const json::value v = json::parse(in.rest(), ec);
  if (ec) return 0;

  if (v.is_object()) {
    FUZZ_CHECK(model::is_known_type(type) == (pick < names.size()));
    if (auto p = model::decode(type, version, v.as_object())) {
      FUZZ_CHECK(pick < names.size());
      FUZZ_CHECK(model::type_name(*p) == type);
      check_round_trip(*p);
    }
  }

  if (auto u = model::decode_usage(v)) {
    FUZZ_CHECK(model::decode_usage(model::encode_usage(*u)).has_value());
    FUZZ_CHECK(*model::decode_usage(model::encode_usage(*u)) == *u || u->cost_usd != u->cost_usd);
    model::usage sum = *u;
    sum += *u;
    sum += sum;
  }
  return 0;
}
