# Turns sim/lab/lab.html into a C array (run by CMake at build time):
#   cmake -DIN=lab.html -DOUT=lab_page.c -P embed.cmake
# The page is served from the binary, so `servesim lab` needs no files but its scenarios.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){24})" "\\1\n" body "${body}")
file(WRITE "${OUT}" "/* Generated from sim/lab/lab.html by sim/lab/embed.cmake: do not edit. */\n"
  "#include \"lab/lab_int.h\"\n"
  "const unsigned char sv__lab_html[] = {\n${body}0x00};\n"
  "const size_t sv__lab_html_len = ${bytes};\n")
