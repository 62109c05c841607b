# Installing and packaging `tether` (included from the top CMakeLists.txt).
#
#   cmake --install build --prefix /usr/local --strip   # the files below
#   make package                                        # build/tether_*.deb (CPack)
#
# Installed: the binary; its manual page and bash/zsh completion, written at
# build time by the binary itself (`tether man`, `tether completion`); the
# systemd unit (packaging/tether.service);
# the license. Everything is the component `runtime`; tests and benchmarks
# install nothing.
include(GNUInstallDirs)

set(tether_share ${CMAKE_BINARY_DIR}/share)
add_custom_command(
  OUTPUT ${tether_share}/tether.1 ${tether_share}/tether.bash ${tether_share}/_tether
  COMMAND ${CMAKE_COMMAND} -E make_directory ${tether_share}
  COMMAND sh -c "\"$0\" man >\"$1/tether.1\" && \"$0\" completion bash >\"$1/tether.bash\" && \"$0\" completion zsh >\"$1/_tether\""
          $<TARGET_FILE:tether> ${tether_share}
  DEPENDS tether
  COMMENT "tether man, tether completion bash|zsh"
  VERBATIM)
add_custom_target(tether_docs ALL DEPENDS ${tether_share}/tether.1 ${tether_share}/tether.bash ${tether_share}/_tether)

install(TARGETS tether RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(FILES ${tether_share}/tether.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
install(FILES ${tether_share}/tether.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME tether COMPONENT runtime)
install(FILES ${tether_share}/_tether DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/tether.service DESTINATION lib/systemd/system COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright COMPONENT runtime)

# The Debian package: the build's binary, stripped (the build type's -O2,
# without its debug information), its library dependencies found by
# dpkg-shlibdeps, and a postinst that makes the `tether` system user the unit
# runs as.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tether)
set(CPACK_PACKAGE_VENDOR "The Tether authors")
set(CPACK_PACKAGE_CONTACT "The Tether authors <tether@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "durable runner for coding agents")
set(CPACK_PACKAGE_DESCRIPTION
    "Tether keeps coding-agent conversations alive across stops, crashes and restarts, drives them through its own agent loop or real agent programs, and serves them over an HTTP API.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap, ca-certificates")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nodejs, npm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
