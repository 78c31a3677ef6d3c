# cmake --install for a public library: its target, its headers (include/oxbow/<HEADERS>), a CMake
# package (find_package(<PACKAGE>), target <PACKAGE>::<NAMESPACE_TARGET>, from the caller's
# <PACKAGE>Config.cmake.in) and a pkg-config file (<PKGCONFIG>.pc from <PKGCONFIG>.pc.in), all
# from the calling folder's sources.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

function(oxbow_install_package)
  cmake_parse_arguments(ARG "" "TARGET;PACKAGE;HEADERS;PKGCONFIG" "" ${ARGN})
  install(TARGETS ${ARG_TARGET} EXPORT ${ARG_PACKAGE}Targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/oxbow/${ARG_HEADERS}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/oxbow)
  set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/${ARG_PACKAGE})
  install(EXPORT ${ARG_PACKAGE}Targets NAMESPACE ${ARG_PACKAGE}:: DESTINATION ${package_dir})
  set(config ${CMAKE_CURRENT_BINARY_DIR}/${ARG_PACKAGE}Config.cmake)
  set(version ${CMAKE_CURRENT_BINARY_DIR}/${ARG_PACKAGE}ConfigVersion.cmake)
  configure_package_config_file(${ARG_PACKAGE}Config.cmake.in ${config}
    INSTALL_DESTINATION ${package_dir})
  write_basic_package_version_file(${version} COMPATIBILITY SameMinorVersion)
  install(FILES ${config} ${version} DESTINATION ${package_dir})
  configure_file(${ARG_PKGCONFIG}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${ARG_PKGCONFIG}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${ARG_PKGCONFIG}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
