// json_pointer — RFC 6901 reference tokens for error paths into a plan.
#pragma once

#include <string>
#include <string_view>

namespace ferrum::detail {

// `key` as one token of a JSON pointer: '~' is written "~0" and '/' "~1", so
// pool "pool/scratch" is `/pools/pool~1scratch`.
inline std::string json_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

}  // namespace ferrum::detail
