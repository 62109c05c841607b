// Error codes of the model layer.
#pragma once

#include <system_error>

namespace tether::model {

enum class model_errc {
  undecodable = 1,  // a stored event whose type, version or payload cannot be read
};

const std::error_category& model_category();
inline std::error_code make_error_code(model_errc e) { return {static_cast<int>(e), model_category()}; }

}  // namespace tether::model

template <>
struct std::is_error_code_enum<tether::model::model_errc> : std::true_type {};
