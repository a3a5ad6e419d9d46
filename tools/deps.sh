#!/bin/sh
# deps.sh qemu|test|ltp [--dry-run]: installs the Debian packages that
# `make qemu`, `make test` or `make ltp-build` need and that are missing (apt-get as root,
# else through sudo), saying what it installs; for test it also registers
# qemu-user's binfmt_misc handler, through which the tests exec riscv64
# programs. Shared by the Makefile and .ci/run. The Go toolchain is not a
# Debian package of the right version: it is only checked.
set -eu

# qemu: QEMU (its firmware, OpenSBI, comes with qemu-system-data), U-Boot
# for S-mode and mke2fs for its boot disk (FIRMWARE=uboot), and what
# `jiege rootfs` runs to fetch and unpack Debian's riscv64 packages.
QEMU_PACKAGES="qemu-system-misc u-boot-qemu e2fsprogs apt dpkg xz-utils ca-certificates"
# test: also qemu-user (the Linux oracle), the riscv64 cross compiler and
# C library (conformance programs), the host's gcc and C library (the
# icount QEMU plugin), load generators, git (provenance), make (a fresh
# Debian image lacks it; .ci/run runs this script first), dtc (the device
# tree of QEMU's icicle kit, which QEMU makes none for).
TEST_PACKAGES="$QEMU_PACKAGES make gcc libc6-dev qemu-user qemu-user-binfmt binutils-riscv64-linux-gnu gcc-riscv64-linux-gnu libc6-dev-riscv64-cross curl cpio wrk apache2-utils git chromium-headless-shell device-tree-compiler"
# ltp: what `make ltp-build` runs to configure and cross-build LTP (its
# autotools and parser generators) on top of the cross compiler. Not part
# of test, so that make test's CI does not install them.
LTP_PACKAGES="$QEMU_PACKAGES make gcc-riscv64-linux-gnu libc6-dev-riscv64-cross binutils-riscv64-linux-gnu autoconf automake m4 bison flex pkgconf"

usage() { echo "usage: $0 qemu|test|ltp [--dry-run]" >&2; exit 2; }
[ $# -ge 1 ] || usage
goal=$1
dry=
[ "${2:-}" = "--dry-run" ] && dry=echo
case $goal in
qemu) want=$QEMU_PACKAGES ;;
test) want=$TEST_PACKAGES ;;
ltp) want=$LTP_PACKAGES ;;
*) usage ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: not a Debian system; make $goal needs the equivalents of: $want" >&2
	exit 0
fi
missing=
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

as_root=
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		as_root=sudo
	elif [ -n "$missing" ]; then
		echo "deps: make $goal needs the Debian packages$missing; as root: apt-get install$missing" >&2
		exit 1
	fi
fi

if [ -n "$missing" ]; then
	echo "deps: installing the Debian packages make $goal needs:$missing"
	$dry $as_root env DEBIAN_FRONTEND=noninteractive apt-get update
	$dry $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi

if [ "$goal" = test ] && [ ! -e /proc/sys/fs/binfmt_misc/qemu-riscv64 ]; then
	echo "deps: registering qemu-user's binfmt_misc handler for riscv64"
	if ! mountpoint -q /proc/sys/fs/binfmt_misc; then
		$dry $as_root mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	fi
	if [ -x /lib/systemd/systemd-binfmt ]; then
		$dry $as_root /lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-riscv64.conf
	else
		# The binfmt.d line is the register string itself.
		$dry $as_root sh -c "grep -v '^#' /usr/lib/binfmt.d/qemu-riscv64.conf > /proc/sys/fs/binfmt_misc/register"
	fi
fi

if ! command -v "${GO:-go}" >/dev/null 2>&1; then
	echo "deps: Go 1.26 is not on PATH (https://go.dev/dl; the README's set-up puts it in /usr/local/go)" >&2
fi
