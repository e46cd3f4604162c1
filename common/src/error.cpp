#include "ferrum/error.hpp"

#include <array>
#include <utility>

namespace ferrum {
namespace {

struct errc_entry {
  std::string_view name;
  std::string_view message;
};

constexpr std::array errc_entries = {errc_entry{"ok", "success"},
#define FERRUM_ERRC_ENTRY(name, message) errc_entry{#name, message},
                                     FERRUM_ERRC_TABLE(FERRUM_ERRC_ENTRY)
#undef FERRUM_ERRC_ENTRY
};

const errc_entry* find_entry(int value) noexcept {
  if (value < 0 || static_cast<std::size_t>(value) >= errc_entries.size()) return nullptr;
  return &errc_entries[static_cast<std::size_t>(value)];
}

class category final : public boost::system::error_category {
 public:
  // A fixed id makes codes from several copies of the library compare equal.
  constexpr category() noexcept : error_category(0x6665'7272'756d'0001ULL) {}

  const char* name() const noexcept override { return "ferrum"; }

  std::string message(int value) const override {
    const errc_entry* entry = find_entry(value);
    return entry ? std::string(entry->message) : "unknown ferrum error";
  }
};

}  // namespace

const boost::system::error_category& ferrum_category() noexcept {
  static const category instance;
  return instance;
}

boost::system::error_code make_error_code(errc code) noexcept { return {static_cast<int>(code), ferrum_category()}; }

std::string_view errc_name(errc code) noexcept {
  const errc_entry* entry = find_entry(static_cast<int>(code));
  return entry ? entry->name : "unknown";
}

std::string error_code_name(const boost::system::error_code& code) {
  if (code.category() == ferrum_category()) return std::string(errc_name(static_cast<errc>(code.value())));
  // A cancelled wave or wait completes with asio::error::operation_aborted
  // (ECANCELED in the system category on POSIX, ERROR_OPERATION_ABORTED on
  // Windows); it gets the name the docs use for it rather than "system:125".
  // Compared by condition, so that common needs no Asio.
  if (code == boost::system::errc::operation_canceled) return "operation_aborted";
  return std::string(code.category().name()) + ":" + std::to_string(code.value());
}

std::string error::what() const {
  std::string text = error_code_name(code);
  text += ": ";
  text += code.message();
  if (!detail.empty()) {
    text += ": ";
    text += detail;
  }
  if (!path.empty()) {
    text += " (at ";
    text += path;
    text += ')';
  }
  return text;
}

std::string printable(std::string_view text, std::size_t limit, std::string_view escaped) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && escaped.find(c) == std::string_view::npos) {
      out += c;
    } else {
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

std::string quote_text(std::string_view text) { return "'" + printable(text, 64, "\\'") + "'"; }

error make_error(errc code, std::string detail, std::string path) {
  return error{make_error_code(code), std::move(path), std::move(detail)};
}

error_exception::error_exception(ferrum::error e) : std::runtime_error(e.what()), error_(std::move(e)) {}

void throw_exception_from_error(const error& e, const boost::source_location&) { throw error_exception(e); }

}  // namespace ferrum
