#include "ferrum/binding/ids.hpp"

#include <algorithm>

namespace ferrum {

bool is_valid_id(std::string_view text) noexcept {
  if (text.empty() || text.size() > max_id_length) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '-' || c == '.' || c == '_' || c == '@';
  });
}

result<bucket_id> bucket_id::make(const bucket_class& cls, const bucket_capacity& dims) {
  if (cls.view().find('@') != std::string_view::npos)
    return make_error(errc::invalid_id, "bucket class " + bucket_class::quote(cls.view()) + " contains '@'");
  std::string text = cls.str();
  text += '@';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) text += 'x';
    text += std::to_string(dims[i]);
  }
  if (text.size() > max_id_length)
    return make_error(errc::invalid_id, "bucket id " + bucket_class::quote(text) + " is longer than 128 characters");
  return bucket_id(std::move(text));
}

}  // namespace ferrum
