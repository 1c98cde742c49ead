# Writes the status page as a C++ raw string literal (included by server/app/page/page.cpp), with the map's
# coastlines (geo/world_outline.txt) put in place of @WORLD_OUTLINE@.
#   cmake -DPAGE=status.html -DOUTLINE=world_outline.txt -DOUT=status_page.inc -P embed.cmake
file(READ "${PAGE}" html)
file(READ "${OUTLINE}" outline)
string(STRIP "${outline}" outline)
string(REPLACE "@WORLD_OUTLINE@" "${outline}" html "${html}")
string(FIND "${html}" ")glbdpage\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${PAGE} contains the raw string's delimiter")
endif()
file(WRITE "${OUT}.tmp" "R\"glbdpage(${html})glbdpage\"\n")
file(RENAME "${OUT}.tmp" "${OUT}")
