# Find Kokkos (Debian's 3.4 Serial by default, any newer one through Kokkos_ROOT) and repair
# Debian's exported target, whose INTERFACE_INCLUDE_DIRECTORIES points at a non-existent folder.
find_package(Kokkos 3.4 REQUIRED CONFIG)
get_target_property(_kolibri_kk_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
if(_kolibri_kk_inc AND NOT EXISTS "${_kolibri_kk_inc}" AND Kokkos_INCLUDE_DIRS)
  set_property(TARGET Kokkos::kokkos PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
  # Kokkos 3.4 headers are C++14 and warn under C++20: include them as system headers.
  set_property(TARGET Kokkos::kokkos PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
endif()
if(Kokkos_DEVICES)
  set(KOLIBRI_KOKKOS_DEVICES "${Kokkos_DEVICES}")
endif()
