#include "node/errors.h"

#include <string>

namespace tether::node {

namespace {
class node_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "node"; }
  std::string message(int c) const override {
    switch (static_cast<node_errc>(c)) {
      case node_errc::data_dir_locked:
        return "data directory in use";
      case node_errc::data_dir_unusable:
        return "data directory unusable";
    }
    return "unknown node error";
  }
};
}  // namespace

const std::error_category& node_category() {
  static const node_category_impl c;
  return c;
}

}  // namespace tether::node
