# The .deb (CPack's DEB generator): `cpack --config build/CPackConfig.cmake` after a build (tests/package/deb.sh
# does it and checks the result). CPack rather than debhelper: it packages the build CI has just tested (no second
# build), needs no top-level debian/ folder, and still computes Depends with dpkg-shlibdeps.
set(GLBD_DEB_DIR ${CMAKE_SOURCE_DIR}/docker/deb)
set(GLBD_DEB_GEN ${CMAKE_BINARY_DIR}/deb)
file(MAKE_DIRECTORY ${GLBD_DEB_GEN})

# Debian wants the manual page and the changelog compressed (gzip -9n: no name, no time stamp).
find_program(GZIP gzip REQUIRED)
foreach(f glbd.1 changelog)
  add_custom_command(OUTPUT ${GLBD_DEB_GEN}/${f}.gz
    COMMAND ${GZIP} -9nc ${GLBD_DEB_DIR}/${f} > ${GLBD_DEB_GEN}/${f}.gz
    DEPENDS ${GLBD_DEB_DIR}/${f} VERBATIM)
endforeach()
add_custom_command(OUTPUT ${GLBD_DEB_GEN}/config.md.gz
  COMMAND ${GZIP} -9nc ${CMAKE_SOURCE_DIR}/docs/config.md > ${GLBD_DEB_GEN}/config.md.gz
  DEPENDS ${CMAKE_SOURCE_DIR}/docs/config.md VERBATIM)
add_custom_target(glbd_deb_docs ALL DEPENDS ${GLBD_DEB_GEN}/glbd.1.gz ${GLBD_DEB_GEN}/changelog.gz
  ${GLBD_DEB_GEN}/config.md.gz)

install(TARGETS glbd RUNTIME DESTINATION bin)
install(FILES docker/systemd/glbd.service DESTINATION /lib/systemd/system)
install(FILES ${GLBD_DEB_DIR}/glbd.yaml DESTINATION /etc/glbd)
install(FILES ${GLBD_DEB_GEN}/glbd.1.gz DESTINATION share/man/man1)
install(FILES ${GLBD_DEB_DIR}/copyright DESTINATION share/doc/glbd)
install(FILES ${GLBD_DEB_GEN}/changelog.gz DESTINATION share/doc/glbd RENAME changelog.Debian.gz)
install(FILES ${GLBD_DEB_GEN}/config.md.gz DESTINATION share/doc/glbd)
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
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${GLBD_DEB_DIR}/conffiles;${GLBD_DEB_DIR}/postinst;${GLBD_DEB_DIR}/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
