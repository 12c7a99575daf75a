// Fuzz target "reasons": the text plugins hand back (reasons, error
// messages, exception texts, version strings) on its way into proto3
// strings, which must be valid UTF-8 or the whole answer is lost.
//
// The input is the bytes a plugin wrote. Oracles: an independent decoder
// (code point by code point, RFC 3629's ranges) agrees with
// runtime::is_valid_utf8; runtime::valid_utf8 always returns valid UTF-8,
// keeps valid text as it is, is idempotent, and keeps every well-formed
// character of the input in order; the SDK's cut (schedplug_utf8_prefix,
// used by schedplug_reason_set and the C++ layer) never exceeds its limit,
// loses at most one character, and keeps valid text valid; a host reason
// buffer the plugin filled to the last byte without a NUL copies out valid.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/fuzz_checks.hpp"
#include "schedplug/runtime.hpp"

namespace runtime = schedplug::runtime;

namespace {

// Decodes by value and range rather than by byte patterns: the check is
// written differently from the code it checks.
bool reference_valid(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    size_t n = c < 0x80         ? 1
               : (c >> 5) == 6  ? 2
               : (c >> 4) == 14 ? 3
               : (c >> 3) == 30 ? 4
                                : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<uint8_t>(s[i + k]);
      if ((b >> 6) != 2) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

// Whether every well-formed character of `in` appears in `out` in order
// (what valid_utf8 keeps; it only drops or replaces bad bytes).
bool keeps_characters(std::string_view in, std::string_view out) {
  size_t at = 0;
  for (size_t i = 0; i < in.size();) {
    const size_t n = runtime::utf8_char_length(in.substr(i));
    if (n == 0) {
      ++i;
      continue;
    }
    const size_t found = out.find(in.substr(i, n), at);
    if (found == std::string_view::npos) return false;
    at = found + n;
    i += n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const bool valid = runtime::is_valid_utf8(in);
  SCHEDPLUG_FUZZ_CHECK(valid == reference_valid(in),
                       "is_valid_utf8 disagrees with the reference decoder");

  const std::string out = runtime::valid_utf8(in);
  SCHEDPLUG_FUZZ_CHECK(runtime::is_valid_utf8(out), "valid_utf8 output");
  SCHEDPLUG_FUZZ_CHECK(!valid || out == in, "valid text changed");
  SCHEDPLUG_FUZZ_CHECK(runtime::valid_utf8(out) == out, "not idempotent");
  SCHEDPLUG_FUZZ_CHECK(out.size() <= 3 * in.size(), "output too long");
  SCHEDPLUG_FUZZ_CHECK(keeps_characters(in, out), "a character was lost");

  for (size_t max : {size_t{0}, size_t{1}, size_t{3}, size_t{7}, size / 2,
                     size_t{SCHEDPLUG_REASON_MAX - 1}}) {
    const size_t n = schedplug_utf8_prefix(in.data(), in.size(), max);
    SCHEDPLUG_FUZZ_CHECK(n <= max, "cut beyond its limit");
    SCHEDPLUG_FUZZ_CHECK(in.size() <= max ? n == in.size() : n + 4 > max,
                         "cut lost more than one character");
    SCHEDPLUG_FUZZ_CHECK(!valid || runtime::is_valid_utf8(in.substr(0, n)),
                         "cutting valid text made it invalid");
  }

  // A plugin that fills the host's buffer to the last byte, with no NUL.
  runtime::ReasonBuffer buffer;
  schedplug_reason* r = buffer.get();
  const size_t fill = std::min<size_t>(in.size(), r->capacity);
  std::memcpy(r->text, in.data(), fill);
  const std::string copied = buffer.str();
  SCHEDPLUG_FUZZ_CHECK(runtime::is_valid_utf8(copied), "ReasonBuffer::str");
  SCHEDPLUG_FUZZ_CHECK(copied.size() <= 3 * r->capacity, "ReasonBuffer size");
  return 0;
}
