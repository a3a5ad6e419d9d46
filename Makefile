# Jiege-Go: a RISC-V kernel in Go that runs Debian's nginx, and jiege, its verifier.
#
#   make qemu    build the kernel and nginx's root filesystem and boot them
#                (FIRMWARE=opensbi: build/Image under OpenSBI; uboot: U-Boot after it);
#                nginx answers on http://127.0.0.1:$(PORT)/
#   make test    every test: host unit tests (also under -race) and QEMU integration tests

GO        ?= go
BUILD     := build
QEMU      ?= qemu-system-riscv64
MEM       ?= 512M
SMP       ?= 1
APPEND    ?=
PORT      ?= 8080
KERNEL    := $(BUILD)/kernel.elf
ROOTFS    := $(BUILD)/rootfs-ours.cpio
TRAMP     := $(BUILD)/tramp.bin
ENTRY     := github.com/jiege-go/jiege/arch/riscv64.Entry
# Linked in the kernel's direct map (mm.KernelDirectMap + the physical
# address 0x80010000); cmd/kimage gives the ELF its physical load addresses.
KERNEL_LDFLAGS := -T 0x2080010000 -R 0x1000 -E $(ENTRY)
# The same kernel as a RISC-V Linux Image, the payload of SBI firmware
# (OpenSBI, U-Boot), which loads it at a 2 MiB-aligned address of its
# choosing: linked a second time in the kernel half's last gigabyte (the
# ELF header's page at 0x3fc0000000, where the Image header replaces it;
# arch/riscv64's imageTable maps it to where it was loaded), entered at
# sbiEntry in S-mode.
IMAGE     := $(BUILD)/Image
IMAGE_ELF := $(BUILD)/kernel-sbi.elf
IMAGE_LDFLAGS := -T 0x3fc0001000 -R 0x1000 -E github.com/jiege-go/jiege/arch/riscv64.sbiEntry

.PHONY: all kernel qemu qemu-kernel qemu-gdb test vet jiege rootfs clean deps-qemu deps-test

all: kernel jiege

kernel: $(KERNEL) $(TRAMP) $(IMAGE)

# The kernel is a linux/riscv64 Go program; it serves its own runtime's
# Linux system calls (see DESIGN.md).
$(KERNEL): FORCE
	@mkdir -p $(BUILD)
	GOOS=linux GOARCH=riscv64 CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags '$(KERNEL_LDFLAGS)' -o $@ ./cmd/kernel
	$(GO) run ./cmd/kimage $@

$(IMAGE): $(KERNEL)
	GOOS=linux GOARCH=riscv64 CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags '$(IMAGE_LDFLAGS)' -o $(IMAGE_ELF) ./cmd/kernel
	$(GO) run ./cmd/kimage -image $@ $(IMAGE_ELF)

# The kernel with Go's coverage counters in the packages a system call
# reaches (syscall, fs, net, mm, kernel and their subpackages; not arch
# nor drivers, which run in trap context), shown in /proc/gocover
# (fs/procfs/cover.go) for make fuzz-cover. Its own trampoline: the entry
# moves.
KERNEL_COVER := $(BUILD)/kernel-cover.elf
COVER_PKGS   := $(shell echo github.com/jiege-go/jiege/cmd/kernel $(foreach p,syscall fs net mm kernel,github.com/jiege-go/jiege/$(p)/...) | tr ' ' ,)
.PHONY: kernel-cover
kernel-cover: $(KERNEL_COVER) $(BUILD)/tramp-cover.bin
$(KERNEL_COVER): FORCE
	@mkdir -p $(BUILD)
	GOOS=linux GOARCH=riscv64 CGO_ENABLED=0 $(GO) build -trimpath -tags kcover \
		-cover -covermode=atomic -coverpkg=$(COVER_PKGS) \
		-ldflags '$(KERNEL_LDFLAGS)' -o $@ ./cmd/kernel
	$(GO) run ./cmd/kimage $@
$(BUILD)/tramp-cover.bin: $(KERNEL_COVER)
	$(GO) run ./qemu/cmd/tramp -kernel $(KERNEL_COVER) -out $@

# The go command builds the kernel with profile-guided optimisation from
# cmd/kernel/default.pgo: CPU profiles, taken on the host (names and call
# sites are the same on riscv64), of netstack answering fresh and
# kept-alive connections and of the file system calls nginx makes per
# request, weighted about as they weigh in the guest. make pgo makes it anew.
.PHONY: pgo
pgo:
	@mkdir -p $(BUILD)
	$(GO) test ./net -run '^$$' -bench 'FreshConnection|KeepAliveRequest' -benchtime 8s \
		-o $(BUILD)/net.test -cpuprofile $(CURDIR)/$(BUILD)/pgo-net.pprof
	$(GO) test ./syscall -run '^$$' -bench 'FileRequest' -benchtime 3s \
		-o $(BUILD)/syscall.test -cpuprofile $(CURDIR)/$(BUILD)/pgo-syscall.pprof
	$(GO) tool pprof -proto $(BUILD)/pgo-net.pprof $(BUILD)/pgo-syscall.pprof > cmd/kernel/default.pgo

# QEMU starts at 0x80000000, not at the ELF entry: a 24-byte trampoline jumps there.
$(TRAMP): $(KERNEL)
	$(GO) run ./qemu/cmd/tramp -kernel $(KERNEL) -out $@

# FIRMWARE=own (the default): the kernel ELF with its own M-mode code
# behind the trampoline; FIRMWARE=opensbi: build/Image as the S-mode
# payload of QEMU's OpenSBI (-bios default), as Linux boots;
# FIRMWARE=uboot: OpenSBI, then Debian's U-Boot for S-mode (u-boot-qemu),
# which boots the Image, the initramfs and the command line from a disk
# image (qemu/cmd/bootdisk: extlinux.conf on ext4), as a board's SD card.
# $(call boot,INITRD,APPEND) are QEMU's arguments that boot the kernel;
# $(call bootdisk,INITRD,APPEND) writes what they need first.
FIRMWARE    ?= own
UBOOT_SMODE ?= /usr/lib/u-boot/qemu-riscv64_smode/uboot.elf
UBOOT_DISK  := $(BUILD)/uboot-disk.img
ifeq ($(FIRMWARE),own)
boot = -bios $(TRAMP) -kernel $(KERNEL) $(if $(1),-initrd $(1)) -append '$(2)'
bootdisk = @true
else ifeq ($(FIRMWARE),opensbi)
boot = -bios default -kernel $(IMAGE) $(if $(1),-initrd $(1)) -append '$(2)'
bootdisk = @true
else ifeq ($(FIRMWARE),uboot)
boot = -bios default -kernel $(UBOOT_SMODE) \
	-drive file=$(UBOOT_DISK),format=raw,if=none,id=boot,readonly=on -device virtio-blk-device,drive=boot
bootdisk = $(GO) run ./qemu/cmd/bootdisk -image $(IMAGE) $(if $(1),-initrd $(1)) -append '$(2)' -out $(UBOOT_DISK)
else
$(error FIRMWARE=$(FIRMWARE): want own, opensbi or uboot)
endif

# The kernel drives modern (version 2) virtio-mmio devices only.
QEMU_DEVICES := -global virtio-mmio.force-legacy=false -device virtio-rng-device \
	-netdev user,id=n0,hostfwd=tcp:127.0.0.1:$(PORT)-:80 -device virtio-net-device,netdev=n0

# The Debian packages each goal needs, installed when missing (as root, or
# through sudo; the script says what it installs). .ci/run uses it too.
deps-qemu:
	@GO=$(GO) sh tools/deps.sh qemu
deps-test:
	@GO=$(GO) sh tools/deps.sh test
deps-ltp:
	@GO=$(GO) sh tools/deps.sh ltp

# Debian's nginx and its libraries (fetched with apt; /init is nginx).
$(ROOTFS): jiege deps-qemu
	$(BUILD)/jiege rootfs --quiet --out $@

qemu: deps-qemu kernel $(ROOTFS)
	@echo "nginx will answer on http://127.0.0.1:$(PORT)/ (Ctrl-A X quits QEMU)"
	$(call bootdisk,$(ROOTFS),$(APPEND))
	$(QEMU) -machine virt -m $(MEM) -smp $(SMP) -nographic $(QEMU_DEVICES) \
		$(call boot,$(ROOTFS),$(APPEND))

# A shell on the console: Debian's busybox (fetched with apt, pinned in
# rootfs.lock) with its applets installed, a controlling terminal (Ctrl-C
# reaches the foreground job) and the network up (wget http://10.0.2.2:PORT/).
SHELL_ROOTFS := $(BUILD)/rootfs-shell.cpio
SHELL_INIT   := init=/usr/bin/busybox -- sh -c "/usr/bin/busybox --install -s /bin; exec /usr/bin/busybox setsid -c /usr/bin/busybox sh -l"
.PHONY: shell
shell: kernel jiege
	$(BUILD)/jiege rootfs --quiet --packages busybox-static --out $(SHELL_ROOTFS)
	@echo "busybox sh on the console (exit or Ctrl-A X quits QEMU)"
	$(call bootdisk,$(SHELL_ROOTFS),$(SHELL_INIT) $(APPEND))
	$(QEMU) -machine virt -m $(MEM) -smp $(SMP) -nographic $(QEMU_DEVICES) \
		$(call boot,$(SHELL_ROOTFS),$(SHELL_INIT) $(APPEND))

# The kernel alone: it prints its boot log and idles (APPEND=selftest runs the checks).
qemu-kernel: kernel
	$(call bootdisk,,$(APPEND))
	$(QEMU) -machine virt -m $(MEM) -smp $(SMP) -nographic $(QEMU_DEVICES) \
		$(call boot,,$(APPEND))

qemu-gdb: kernel
	@echo "gdb-multiarch $(KERNEL) -ex 'target remote :1234'"
	$(call bootdisk,,$(APPEND))
	$(QEMU) -machine virt -m $(MEM) -smp $(SMP) -nographic $(QEMU_DEVICES) -S -gdb tcp:127.0.0.1:1234 \
		$(call boot,,$(APPEND))

jiege:
	@mkdir -p $(BUILD)
	$(GO) build -o $(BUILD)/jiege ./tools/jiege

# The nginx root filesystem (FLAVOR=ours or linux), or with
# PACKAGES=busybox-static,dash,... one of those Debian packages and their
# dependencies; cached under build/rootfs, the same code as `jiege rootfs`.
FLAVOR ?= ours
PACKAGES ?=
rootfs: jiege
	$(BUILD)/jiege rootfs $(if $(PACKAGES),--packages $(PACKAGES),--flavor $(FLAVOR))

# jiege end to end against real QEMU guests: verify linux, the selfcheck with
# its negative controls, bad input, attempts and Ctrl-C. Also part of `make test`.
.PHONY: test-e2e
test-e2e: jiege
	$(GO) test -count=1 -timeout 40m -run Jiege -v ./tests/

# jiege's repeatability: selfcheck three times (same verdicts?) and the
# fingerprint's random requests on Debian's Linux against the oracle with
# 20 seeds (any difference?); report in build/repeatability/. About 40
# minutes on 2 cores.
# LTP, the Linux Test Project: its syscall tests cross-built for riscv64,
# dynamically linked against the guest's glibc, under
# build/ltp/<sha256 of the tarball, 16 hex>/opt/ltp (rebuilt only when the
# tarball changes; about 3 to 12 minutes on 2 cores).
# The tarball sits in ../shared/ltp beside the checkout.
LTP_TARBALL ?= $(firstword $(wildcard ../shared/ltp/ltp-20260529.tar.xz /work/shared/ltp/ltp-20260529.tar.xz) ../shared/ltp/ltp-20260529.tar.xz)
.PHONY: ltp-build deps-ltp
ltp-build: deps-ltp
	sh tools/ltp/build.sh $(LTP_TARBALL) $(BUILD)/ltp

# Runs them on our kernel and on Debian's Linux (about 15 minutes each for
# all of them), writes tests/testdata/ltp/results-{linux,ours}.txt and
# README's table. LTP_FLAGS='--limit 100' or '--run REGEXP' runs a subset.
LTP_FLAGS ?=
.PHONY: ltp
ltp: ltp-build kernel jiege
	$(BUILD)/jiege ltp --opt $$(sh tools/ltp/build.sh $(LTP_TARBALL) $(BUILD)/ltp) $(LTP_FLAGS)
	$(GO) test ./tools/jiege/internal/ltp -run README -count=1 -update-readme

# The regression gate of make test: the LTP tests that pass on both
# kernels in tests/testdata/ltp (both-pass.txt, kept equal to the result
# files by go test ./tools/jiege/internal/ltp) must pass on ours; one that
# fails is run once more on its own before it fails the gate.
.PHONY: ltp-gate
ltp-gate: ltp-build kernel jiege
	$(BUILD)/jiege ltp --opt $$(sh tools/ltp/build.sh $(LTP_TARBALL) $(BUILD)/ltp) --kernel ours --gate tests/testdata/ltp/both-pass.txt --out $(BUILD)/ltp/gate

.PHONY: repeatability
repeatability: jiege kernel
	$(BUILD)/jiege repeatability --selfchecks 3 --probe-runs 20 --out $(BUILD)/repeatability

# Debian's everyday programs on the kernel, each compared with the same
# binaries under qemu-riscv64 (tests/debian_test.go), with the shells, Go
# programs and nginx that make test runs too; they check README's table of
# programs against their results, and UPDATE=1 rewrites it.
PROGRAM_TESTS := TestShells|TestCoreutils|TestScripting|TestPython|TestRedis|TestCurl|TestGoProgram|TestGoHTTPServer|TestNginx|TestREADMEProgramTable
.PHONY: test-programs
test-programs: kernel jiege
	JIEGE_PROGRAMS=1 $(GO) test -count=1 -timeout 90m -run '^($(PROGRAM_TESTS))' -v ./tests/ $(if $(UPDATE),-args -update-programs)

# A long pass of the resource fuzzer (tests/testdata/fuzz/programs.c):
# SEEDS=first-last, N programs each, WORKERS at once, on SMP harts (make
# fuzz SMP=4). make fuzz-calls runs the random-argument fuzzer, CALLS each.
# make fuzz-cover runs it on build/kernel-cover.elf twice, guided by the
# kernel's coverage and not, and prints the coverage of both per package.
SEEDS   ?= 1-20
N       ?= 2000
WORKERS ?= 8
CALLS   ?= 50000
.PHONY: fuzz fuzz-calls fuzz-cover
fuzz: kernel
	JIEGE_SMP=$(SMP) JIEGE_FUZZ_SEEDS=$(SEEDS) JIEGE_FUZZ_PROGRAMS=$(N) JIEGE_FUZZ_WORKERS=$(WORKERS) \
		$(GO) test -count=1 -timeout 600m -run 'TestSyscallFuzz/programs' -v ./tests/
fuzz-cover: kernel kernel-cover
	JIEGE_SMP=$(SMP) JIEGE_FUZZ_SEEDS=$(SEEDS) JIEGE_FUZZ_PROGRAMS=$(N) JIEGE_FUZZ_WORKERS=$(WORKERS) JIEGE_FUZZ_COVER=1 \
		$(GO) test -count=1 -timeout 600m -run 'TestSyscallFuzz/programs' -v ./tests/
fuzz-calls: kernel
	JIEGE_SMP=$(SMP) JIEGE_FUZZ_SEEDS=$(SEEDS) JIEGE_FUZZ_CALLS=$(CALLS) \
		$(GO) test -count=1 -timeout 600m -run 'TestSyscallFuzz/calls' -v ./tests/

# nginx under a long load beside issue 34's hostile programs (socket
# buffers filled, epoll loops, closes under blocked calls; testdata/soak.c
# as /init), then idle: no request fails and the kernel gives back what
# it took. SOAK_SMP harts.
REQUESTS ?= 100000
SOAK_SMP ?= 2
.PHONY: soak
soak: kernel
	JIEGE_SOAK=1 JIEGE_SOAK_REQUESTS=$(REQUESTS) JIEGE_SMP=$(SOAK_SMP) $(GO) test -count=1 -timeout 200m -run TestSoak -v ./tests/

# jiege compare of Debian's Linux, ours and an attempt on a host a busy
# loop keeps loaded, then jiege bench of the same beside it: every
# leaderboard ratio within the bench's spread (issue 35).
.PHONY: compare-loaded
compare-loaded: kernel jiege
	JIEGE_LOADED=1 $(GO) test -count=1 -timeout 150m -run TestJiegeCompareOnLoadedHost -v ./tests/

# The QEMU plugin that counts guest instructions (tools/icount, jiege
# bench --icount): Debian's gcc and C library only; the plugin declares
# the part of QEMU's plugin API it uses, for Debian ships no header.
HOSTCC        ?= gcc
ICOUNT_PLUGIN := $(BUILD)/icount.so
.PHONY: icount-plugin
icount-plugin: $(ICOUNT_PLUGIN)
$(ICOUNT_PLUGIN): tools/icount/plugin/icount.c
	@mkdir -p $(BUILD)
	@command -v $(HOSTCC) >/dev/null || { echo "icount-plugin: $(HOSTCC) not found (Debian: apt-get install gcc libc6-dev)" >&2; exit 1; }
	$(HOSTCC) -O2 -Wall -Werror -shared -fPIC -o $@ $< -lpthread

vet:
	test -z "$$(gofmt -l .)" || (gofmt -l .; exit 1)
	$(GO) vet ./...
	GOOS=linux GOARCH=riscv64 $(GO) vet ./...

# The host-testable packages (all but ./tests, which boots QEMU) run a
# second time under the race detector (issue 34): 3m12s on the shared
# 2-core machine with a warm build cache, most of it probe's own waits.
RACE_PKGS := ./abi/... ./fs/... ./kernel/... ./mm/... ./net/... ./syscall/... \
	./profiling/... ./internal/... ./qemu/... ./tools/...

test: deps-test vet kernel kernel-cover
	$(GO) test -timeout 80m ./...
	$(GO) test -race -timeout 30m $(RACE_PKGS)
	@if [ -f $(LTP_TARBALL) ]; then $(MAKE) ltp-gate; else echo "make test: the LTP gate did NOT run: no LTP tarball at $(LTP_TARBALL)"; fi

clean:
	rm -rf $(BUILD)

FORCE:
