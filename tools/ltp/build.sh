#!/bin/sh
# build.sh TARBALL OUTDIR: cross-builds LTP's lib and its syscall tests
# (testcases/kernel/syscalls) for riscv64 with Debian's cross gcc,
# dynamically linked against glibc (Debian's riscv64 libc6 in the guest
# root filesystem runs them: the cross libc is the same or older), and
# installs them under OUTDIR/<sha256 of TARBALL, 16 hex>/opt/ltp. Prints
# that opt/ltp directory. Does nothing when it is already built from this
# tarball (a stamp file records the complete install).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 TARBALL OUTDIR" >&2; exit 2; }
tarball=$(realpath "$1")
sum=$(sha256sum "$tarball" | cut -c1-16)
top=$(realpath -m "$2/$sum")
stamp=$top/built
if [ -e "$stamp" ]; then
	echo "$top/opt/ltp"
	exit 0
fi
rm -rf "$top"
mkdir -p "$top/src"
tar -xJf "$tarball" -C "$top/src" --strip-components=1
cd "$top/src"
jobs=$(nproc)
{
	make autotools
	# PKG_CONFIG_LIBDIR keeps the host's libraries out of the cross build.
	PKG_CONFIG_LIBDIR=/usr/riscv64-linux-gnu/lib/pkgconfig \
		./configure --host=riscv64-linux-gnu CC=riscv64-linux-gnu-gcc \
		--prefix=/opt/ltp
	make -j"$jobs" -C lib
	make -j"$jobs" -C testcases/kernel/syscalls
	make -C testcases/kernel/syscalls install DESTDIR="$top"
} >"$top/build.log" 2>&1 || { echo "ltp-build: failed, see $top/build.log" >&2; tail -20 "$top/build.log" >&2; exit 1; }
mkdir -p "$top/opt/ltp/runtest"
cp runtest/syscalls "$top/opt/ltp/runtest/"
riscv64-linux-gnu-strip "$top"/opt/ltp/testcases/bin/* 2>/dev/null || true
touch "$stamp"
echo "$top/opt/ltp"
