// The wire formats the native runtime's providers speak (provider.h).
#pragma once

#include <optional>
#include <string_view>

namespace tether::runtime::native {

enum class wire_api { openai_chat, openai_responses, anthropic };
std::string_view to_string(wire_api w);  // "openai-chat", "openai-responses", "anthropic"
std::optional<wire_api> parse_wire_api(std::string_view s);

}  // namespace tether::runtime::native
