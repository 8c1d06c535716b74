# The yurthub Debian package (CPack, DEB generator): /usr/bin/yurthub, the systemd units in
# /lib/systemd/system (the service, and the socket that holds its ports) and /etc/default/yurthub (a conffile) that the unit reads. Included from the
# top-level CMakeLists.txt; `cmake --build --preset release --target package` writes
# build/release/yurthub_<version>_<arch>.deb. test/packaging checks the result.
set(YURTHUB_PACKAGING_DIR ${CMAKE_CURRENT_LIST_DIR})

# Absolute destinations: Debian 12 (not usr-merged in its packages) keeps units in /lib/systemd.
install(FILES ${YURTHUB_PACKAGING_DIR}/yurthub.service ${YURTHUB_PACKAGING_DIR}/yurthub.socket
        DESTINATION /lib/systemd/system)
install(FILES ${YURTHUB_PACKAGING_DIR}/yurthub.default DESTINATION /etc/default RENAME yurthub)
install(FILES ${PROJECT_SOURCE_DIR}/docs/operations.md ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION share/doc/yurthub)

# Staged with DESTDIR under the package's prefix: without it CPack would install the absolute
# destinations above into the build machine's own /lib and /etc.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME yurthub)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "yurthub maintainers <yurthub@example.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "node proxy to the Kubernetes apiserver, a drop-in for OpenYurt's YurtHub")
set(CPACK_PACKAGE_DESCRIPTION
    "yurthub runs on every edge node between kubelet (and the node's other clients) and the \
cloud's\nkube-apiserver: it spreads requests over healthy apiservers, filters responses and \
caches them\nso the node keeps working while the cloud is unreachable.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the libraries the binary links (dpkg-shlibdeps: needs dpkg-dev and file).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Shipped stripped; debugging builds come from the source tree.
set(CPACK_STRIP_FILES ON)
# conffiles: dpkg keeps an edited /etc/default/yurthub on upgrade. The maintainer scripts reload
# systemd, restart a running hub after an upgrade, stop and disable it on removal; they never
# enable or start it (SERVER_ADDR must be set first).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${YURTHUB_PACKAGING_DIR}/conffiles ${YURTHUB_PACKAGING_DIR}/postinst
    ${YURTHUB_PACKAGING_DIR}/prerm ${YURTHUB_PACKAGING_DIR}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
