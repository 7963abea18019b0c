# A text file as a C++ string constant, at build time:
#   cmake -DINPUT=<file> -DOUTPUT=<.cpp> -DSYMBOL=<name> -P EmbedText.cmake
# The report page (src/report/page/report.html) is written as a page, with its own syntax highlighting and
# checks, rather than as a C++ literal; this makes it one. A raw string literal keeps it byte for byte.
file(READ "${INPUT}" content)
string(FIND "${content}" ")qk_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string's delimiter )qk_embed\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/EmbedText.cmake: do not edit.\n"
  "namespace qk::report {\n"
  "extern const char ${SYMBOL}[];\n"
  "const char ${SYMBOL}[] = R\"qk_embed(${content})qk_embed\";\n"
  "}  // namespace qk::report\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
