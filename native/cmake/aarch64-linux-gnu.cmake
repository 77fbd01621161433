# CMake toolchain file for linux-arm64 (aarch64, glibc) on a Debian x86-64 machine: Debian's
# cross compilers (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu), Debian's arm64 packages
# installed through multiarch for the libraries (libssl-dev:arm64, liburing-dev:arm64 in
# /usr/lib/aarch64-linux-gnu, their arch-specific headers in /usr/include/aarch64-linux-gnu;
# libc6:arm64 and libstdc++6:arm64 to run the programs),
# and qemu-user-static to run what was built (CMake's try_run checks in libzmq's build, and
# ctest). scripts/native-arm64.sh installs all of it and uses this file for libzmq and native/.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The compilers know the multiarch directories; CMake's find_* calls look in
# /usr/lib/aarch64-linux-gnu through CMAKE_LIBRARY_ARCHITECTURE, which it takes from the
# compiler. Programs (python3, node, the emulator) are the host's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config must describe arm64 packages too: FindOpenSSL takes its hints from it, and the
# host's .pc files would point it at /usr/lib/x86_64-linux-gnu/libssl.a.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# qemu-aarch64-static runs arm64 programs here. Their glibc, libstdc++ and libgcc_s are Debian's
# arm64 packages installed through multiarch (libc6:arm64, libstdc++6:arm64; the loader is
# /lib/ld-linux-aarch64.so.1), so no -L / QEMU_LD_PREFIX: with -L /usr/aarch64-linux-gnu (the
# cross compilers' own libc6-arm64-cross, 2.36-8cross1 on Debian 12) the loader came from there
# but libc.so.6 from /lib/aarch64-linux-gnu (libc6:arm64, 2.36-9+deb12u14, which libssl-dev:arm64
# pulls in), and the mixed pair hung in the first pthread_create. try_run and ctest prepend
# this to every program built here.
find_program(ZLINK_QEMU_AARCH64 qemu-aarch64-static)
if(ZLINK_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${ZLINK_QEMU_AARCH64}")
endif()
