# The .deb (CPack's DEB generator): `cpack --config build/CPackConfig.cmake` after a build (tests/package/deb.sh
# does it and checks the result). CPack rather than debhelper: it packages the build CI has just tested (no second
# build), needs no top-level debian/ folder, and still computes Depends with dpkg-shlibdeps.
set(GLBD_DEB_DIR ${CMAKE_SOURCE_DIR}/docker/deb)
set(GLBD_DEB_GEN ${CMAKE_BINARY_DIR}/deb)
file(MAKE_DIRECTORY ${GLBD_DEB_GEN})

# Debian wants the manual page, the changelog and long docs compressed (gzip -9n: no name, no time stamp).
find_program(GZIP gzip REQUIRED)
add_custom_command(OUTPUT ${GLBD_DEB_GEN}/changelog.gz
  COMMAND ${GZIP} -9nc ${GLBD_DEB_DIR}/changelog > ${GLBD_DEB_GEN}/changelog.gz
  DEPENDS ${GLBD_DEB_DIR}/changelog VERBATIM)
# Every guide, as the repository has them (README.md first: the docs link to it and to each other).
file(GLOB GLBD_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
list(PREPEND GLBD_DOCS ${CMAKE_SOURCE_DIR}/README.md)
set(GLBD_DOCS_GZ)
foreach(doc ${GLBD_DOCS})
  get_filename_component(name ${doc} NAME)
  add_custom_command(OUTPUT ${GLBD_DEB_GEN}/${name}.gz
    COMMAND ${GZIP} -9nc ${doc} > ${GLBD_DEB_GEN}/${name}.gz
    DEPENDS ${doc} VERBATIM)
  list(APPEND GLBD_DOCS_GZ ${GLBD_DEB_GEN}/${name}.gz)
endforeach()
# The manual page is made from `glbd --help` by help2man, with the sections --help has not (glbd.h2m): the
# commands it lists are the program's own. SOURCE_DATE_EPOCH, when set, dates it (reproducible builds).
find_program(HELP2MAN help2man)
if(HELP2MAN)
  add_custom_command(OUTPUT ${GLBD_DEB_GEN}/glbd.1.gz
    COMMAND ${HELP2MAN} --no-info --locale=C.UTF-8 --section=1 --manual "User Commands"
            --include=${GLBD_DEB_DIR}/glbd.h2m --output=${GLBD_DEB_GEN}/glbd.1 $<TARGET_FILE:glbd>
    COMMAND ${GZIP} -9nf ${GLBD_DEB_GEN}/glbd.1
    DEPENDS glbd ${GLBD_DEB_DIR}/glbd.h2m VERBATIM)
  set(GLBD_MAN ${GLBD_DEB_GEN}/glbd.1.gz)
  install(FILES ${GLBD_MAN} DESTINATION share/man/man1)
else()
  message(WARNING "help2man not found: the .deb is built without its manual page (bash .ci/deps installs it)")
endif()
add_custom_target(glbd_deb_docs ALL DEPENDS ${GLBD_MAN} ${GLBD_DEB_GEN}/changelog.gz ${GLBD_DOCS_GZ})

install(TARGETS glbd RUNTIME DESTINATION bin)
install(FILES docker/systemd/glbd.service DESTINATION /lib/systemd/system)
install(FILES ${GLBD_DEB_DIR}/glbd.yaml DESTINATION /etc/glbd)
install(FILES ${GLBD_DEB_DIR}/copyright DESTINATION share/doc/glbd)
install(FILES ${GLBD_DEB_GEN}/changelog.gz DESTINATION share/doc/glbd RENAME changelog.Debian.gz)
install(FILES ${GLBD_DOCS_GZ} DESTINATION share/doc/glbd)
install(FILES ${CMAKE_SOURCE_DIR}/docs/images/status-page.png DESTINATION share/doc/glbd/docs/images)
install(FILES ${GLBD_DEB_DIR}/lintian-overrides DESTINATION share/lintian/overrides RENAME glbd)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME glbd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "glbd developers <glbd@example.org>")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "authoritative DNS for global load balancing across clusters")
# The extended description (CPack writes the summary above as the synopsis and indents these lines).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "The parent zone delegates a subdomain to one glbd in each Kubernetes
cluster. Each knows its own cluster's endpoints for every load-balanced
host name, checks their health, shares them with its peers over the DNS
port with TSIG, and answers every query from the merged global view by
the client's country, continent, a default geo, weight and health.
Hosts come from a YAML file or from Kuadrant DNSRecords.")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://glbd.example.org/")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl and libsystemd are opened when first needed (resolver/base/shared_library.hpp), so dpkg-shlibdeps cannot
# see them: named here. libcurl from 7.84 on: its global set-up is then thread-safe (a health or Kubernetes
# thread may be the first to call it).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libcurl4 (>= 7.84.0), libsystemd0")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${GLBD_DEB_DIR}/conffiles;${GLBD_DEB_DIR}/postinst;${GLBD_DEB_DIR}/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
