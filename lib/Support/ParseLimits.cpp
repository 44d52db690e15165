//===- ParseLimits.cpp - bounds checked before a parser runs --------------===//

#include "vram/Support/ParseLimits.h"

std::optional<size_t> vram::findExcessiveNesting(llvm::StringRef text,
                                                 unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '"':
      // A string literal, with backslash escapes, ends at its quote (or at
      // the end of the line, where the parser reports it).
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        i = std::min(text.find('\n', i), e);
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > maxDepth)
        return i;
      break;
    case '>':
      // An arrow (`->`) and a comparison (`>=`) close nothing.
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < e && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}
