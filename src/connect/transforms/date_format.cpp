#include "connect/transforms/date_format.h"

#include <cctype>
#include <chrono>
#include <stdexcept>
#include <string_view>

namespace oxbow::connect::transforms {

namespace {

constexpr std::string_view kLetters = "yMdHmsSz";

// Days since the epoch of a year, month and day, months and days past their range rolled over.
int64_t epochDay(int64_t year, int64_t month, int64_t day) {
  using namespace std::chrono;
  int64_t monthIndex = month - 1;
  year += monthIndex >= 0 ? monthIndex / 12 : (monthIndex - 11) / 12;
  monthIndex -= (monthIndex >= 0 ? monthIndex / 12 : (monthIndex - 11) / 12) * 12;
  sys_days first{std::chrono::year(static_cast<int>(year)) /
                 std::chrono::month(static_cast<unsigned>(monthIndex + 1)) / 1};
  return first.time_since_epoch().count() + day - 1;
}

// SimpleDateFormat's reading of a two-digit year: the year ending so in the hundred years that
// start eighty years ago.
int64_t twoDigitYear(int64_t twoDigits) {
  using namespace std::chrono;
  int64_t start = static_cast<int>(year_month_day(floor<days>(system_clock::now())).year()) - 80;
  int64_t year = start - start % 100 + twoDigits;
  return year < start ? year + 100 : year;
}

}  // namespace

UtcDateFormat::UtcDateFormat(const std::string& pattern) : pattern_(pattern) {
  for (size_t i = 0; i < pattern.size();) {
    char c = pattern[i];
    if (c == '\'') {
      if (i + 1 < pattern.size() && pattern[i + 1] == '\'') {
        tokens_.push_back({0, 0, "'"});
        i += 2;
        continue;
      }
      size_t close = pattern.find('\'', i + 1);
      if (close == std::string::npos) throw std::invalid_argument("Unterminated quote");
      tokens_.push_back({0, 0, pattern.substr(i + 1, close - i - 1)});
      i = close + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      if (kLetters.find(c) == std::string_view::npos) {
        throw std::invalid_argument(std::string("Illegal pattern character '") + c + "'");
      }
      size_t end = pattern.find_first_not_of(c, i);
      if (end == std::string::npos) end = pattern.size();
      tokens_.push_back({c, end - i, {}});
      i = end;
    } else {
      tokens_.push_back({0, 0, std::string(1, c)});
      ++i;
    }
  }
}

std::string UtcDateFormat::format(int64_t epochMillis) const {
  using namespace std::chrono;
  sys_time<milliseconds> time{milliseconds(epochMillis)};
  sys_days day = floor<days>(time);
  year_month_day date(day);
  int64_t millisOfDay = (time - day).count();
  std::string out;
  for (const Token& token : tokens_) {
    int64_t field = 0;
    switch (token.letter) {
      case 0:
        out += token.text;
        continue;
      case 'z':
        out += "UTC";
        continue;
      case 'y':
        field = static_cast<int>(date.year());
        if (token.count == 2) field %= 100;
        break;
      case 'M':
        field = static_cast<unsigned>(date.month());
        break;
      case 'd':
        field = static_cast<unsigned>(date.day());
        break;
      case 'H':
        field = millisOfDay / 3600000;
        break;
      case 'm':
        field = millisOfDay / 60000 % 60;
        break;
      case 's':
        field = millisOfDay / 1000 % 60;
        break;
      default:
        field = millisOfDay % 1000;
    }
    std::string digits = std::to_string(field);
    if (digits.size() < token.count) out.append(token.count - digits.size(), '0');
    out += digits;
  }
  return out;
}

std::optional<int64_t> UtcDateFormat::parse(const std::string& text) const {
  int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
  size_t at = 0;
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const Token& token = tokens_[i];
    if (token.letter == 0) {
      if (text.compare(at, token.text.size(), token.text) != 0) return std::nullopt;
      at += token.text.size();
      continue;
    }
    if (token.letter == 'z') {
      // The zone is always UTC here; Java would also accept and apply other zones.
      if (text.compare(at, 3, "UTC") != 0 && text.compare(at, 3, "GMT") != 0) return std::nullopt;
      at += 3;
      continue;
    }
    // A number abutting the next number field takes exactly its letters' width.
    bool abutting = i + 1 < tokens_.size() && tokens_[i + 1].letter != 0;
    size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) &&
           (!abutting || end - at < token.count) && end - at < 18) {
      ++end;
    }
    if (end == at) return std::nullopt;
    size_t width = end - at;
    int64_t field = std::stoll(text.substr(at, width));
    at = end;
    switch (token.letter) {
      case 'y':
        year = token.count == 2 && width == 2 ? twoDigitYear(field) : field;
        break;
      case 'M':
        month = field;
        break;
      case 'd':
        day = field;
        break;
      case 'H':
        hour = field;
        break;
      case 'm':
        minute = field;
        break;
      case 's':
        second = field;
        break;
      default:
        millis = field;
    }
  }
  return epochDay(year, month, day) * 86400000 + hour * 3600000 + minute * 60000 + second * 1000 +
         millis;
}

}  // namespace oxbow::connect::transforms
