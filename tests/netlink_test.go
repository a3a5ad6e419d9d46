package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// userNetwork is QEMU's user network with a virtio-net device, as the
// kernel and Debian's Linux both get it in TestNetworkInterfaces.
var userNetwork = []string{"-global", "virtio-mmio.force-legacy=false",
	"-netdev", "user,id=n0", "-device", "virtio-net-device,netdev=n0"}

// linuxNetworkInit is Debian's Linux's /init for TestNetworkInterfaces:
// it loads the network modules (those Debian's kernel has built in
// already fail quietly) and configures lo and eth0 as jiege's Linux root
// filesystem does (10.0.2.15/24 via 10.0.2.2), waits for eth0's carrier,
// then runs the script.
const linuxNetworkInit = `#!/usr/bin/busybox sh
bb=/usr/bin/busybox
$bb mkdir -p /proc /sys /dev
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev
for m in %s; do $bb insmod $m 2>/dev/null; done
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do $bb sleep 0.1; i=$((i+1)); done
$bb ip link set lo up
$bb ip addr add 10.0.2.15/24 dev eth0
$bb ip link set eth0 up
$bb ip route add default via 10.0.2.2
i=0
while [ "$($bb cat /sys/class/net/eth0/carrier)" != 1 ] && [ $i -lt 50 ]; do $bb sleep 0.1; i=$((i+1)); done
exec $bb sh /netlink.sh
`

var (
	insmodLine = regexp.MustCompile(`insmod (\S+\.ko)`)
	// Linux gives eth0 IPv6 addresses and routes of its own (a link-local
	// address, and SLAAC from QEMU's router advertisements, which come at
	// varying times); the kernel's eth0 is IPv4 only.
	linuxOnlyIPv6 = regexp.MustCompile(`fe80:|fec0:|^getaddr: addr index 2 family 10 |^ifaddr eth0 family 10 `)
	// Packet counters depend on what QEMU's network sent meanwhile.
	packetCounter = regexp.MustCompile(`((?:packets|bytes|errors|dropped|overruns|frame|carrier|collisions):)\d+( \([^)]*\))?`)
)

// TestNetworkInterfaces runs busybox's ip (addr, link, route), ifconfig
// and route, and a glibc program reading getifaddrs and raw NETLINK_ROUTE
// dumps (testdata/netlink/ifaddrs.c), on the kernel and on Debian's Linux
// 6.12, each with QEMU's user network, and compares their output: the
// interfaces' names, indexes, flags, MTUs, MACs, addresses and routes as
// netlink, the SIOCGIF* ioctls and /proc/net show them.
func TestNetworkInterfaces(t *testing.T) {
	script, err := os.ReadFile("testdata/programs/netlink.sh")
	if err != nil {
		t.Fatal(err)
	}
	prog := crossCompile(t, "netlink/ifaddrs.c")

	// Linux: busybox and the modules from jiege's Linux root filesystem.
	tree, treeInit, files := linuxRootfsBusybox(t)
	files["netlink.sh"], files["ifaddrs"] = string(script), string(prog)
	var modules []string
	for _, m := range insmodLine.FindAllStringSubmatch(string(treeInit), -1) {
		ko, err := os.ReadFile(filepath.Join(tree, m[1]))
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(m[1], "/")] = string(ko)
		modules = append(modules, m[1])
	}
	if len(modules) == 0 {
		t.Fatalf("no insmod in jiege's Linux /init:\n%s", treeInit)
	}
	linuxInit := strings.Replace(linuxNetworkInit, "%s", strings.Join(modules, " "), 1)
	want, wantCode := linuxOracle(t, initramfs(t, []byte(linuxInit), files), userNetwork...)
	if !strings.Contains(want, "inet 10.0.2.15/24 scope global eth0") {
		t.Fatalf("Linux did not configure eth0:\n%s", want)
	}

	// The kernel: the same busybox from Debian's package, configured at boot.
	root := debianRootfs(t, shellPackages)
	initrd := withFiles(t, root.archive, map[string][]byte{"netlink.sh": script, "ifaddrs": prog})
	r := bootKernel(t, "256M", "init=/usr/bin/busybox -- sh /netlink.sh", 2*time.Minute,
		append([]string{"-initrd", initrd}, userNetwork...)...)
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	got := strings.Join(initOutput(r.console), "\n")
	n := compareWithOracle(t, bootResult{console: "0 KiB unpacked\n" + comparable(got), exitCode: r.exitCode},
		comparable(want), wantCode)
	t.Logf("%d lines the same as Linux's", n)
}

// comparable drops what only Linux has (eth0's IPv6) and the counters.
func comparable(out string) string {
	var keep []string
	dropped := false
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if linuxOnlyIPv6.MatchString(l) || (dropped && strings.Contains(l, "valid_lft")) {
			dropped = true
			continue
		}
		dropped = false
		keep = append(keep, packetCounter.ReplaceAllString(l, "${1}N"))
	}
	return strings.Join(keep, "\n") + "\n"
}

// linuxRootfsBusybox returns the tree of jiege's Linux root filesystem, its
// /init, and busybox from it as an initramfs file.
func linuxRootfsBusybox(t *testing.T) (tree string, init []byte, files map[string]string) {
	t.Helper()
	res := jiege(t, 10*time.Minute, nil, "rootfs", "--flavor", "linux", "--quiet")
	if res.code != 0 {
		t.Fatalf("jiege rootfs --flavor linux: exit %d\n%s", res.code, res.stderr)
	}
	for _, l := range strings.Split(res.stdout, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "tree" {
			tree = strings.TrimSpace(v)
		}
	}
	init, err := os.ReadFile(filepath.Join(tree, "init"))
	if err != nil {
		t.Fatalf("jiege's Linux tree (%q): %v", tree, err)
	}
	busybox, err := os.ReadFile(filepath.Join(tree, "usr/bin/busybox"))
	if err != nil {
		t.Fatal(err)
	}
	return tree, init, map[string]string{"usr/bin/busybox": string(busybox)}
}

// TestMountPrograms runs busybox mount, df, stat -f and umount on tmpfs
// and proc mounts (testdata/programs/mounts.sh) as init on the kernel and
// on Debian's Linux, and compares their output.
func TestMountPrograms(t *testing.T) {
	script, err := os.ReadFile("testdata/programs/mounts.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, _, files := linuxRootfsBusybox(t)
	files["mounts.sh"] = string(script)
	init := "#!/usr/bin/busybox sh\nexec /usr/bin/busybox sh /mounts.sh\n"
	want, wantCode := linuxOracle(t, initramfs(t, []byte(init), files))
	if !strings.Contains(want, "scratch on /mnt/a type tmpfs") {
		t.Fatalf("Linux did not mount:\n%s", want)
	}
	root := debianRootfs(t, shellPackages)
	initrd := withFiles(t, root.archive, map[string][]byte{"mounts.sh": script})
	r := bootKernel(t, "256M", "init=/usr/bin/busybox -- sh /mounts.sh", 2*time.Minute, "-initrd", initrd)
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	t.Logf("%d lines the same as Linux's", compareWithOracle(t, r, want, wantCode))
}

// TestProcessPrograms runs busybox ps, free and top
// (testdata/programs/ps.sh) as init on the kernel and on Debian's Linux
// and compares what they show of this script's processes and the shape
// of their summaries.
func TestProcessPrograms(t *testing.T) {
	script, err := os.ReadFile("testdata/programs/ps.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, _, files := linuxRootfsBusybox(t)
	files["ps.sh"] = string(script)
	init := "#!/usr/bin/busybox sh\nexec /usr/bin/busybox sh /ps.sh\n"
	want, wantCode := linuxOracle(t, initramfs(t, []byte(init), files))
	if !strings.Contains(want, "S    busybox          busybox sleep 30") {
		t.Fatalf("Linux's ps does not show the sleeping child:\n%s", want)
	}
	root := debianRootfs(t, shellPackages)
	initrd := withFiles(t, root.archive, map[string][]byte{"ps.sh": script})
	r := bootKernel(t, "256M", "init=/usr/bin/busybox -- sh /ps.sh", 2*time.Minute, "-initrd", initrd)
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	t.Logf("%d lines the same as Linux's", compareWithOracle(t, r, want, wantCode))
}

// TestProcConfigGz reads /proc/config.gz with busybox zcat as init, the
// way LTP's tst_kconfig reads it (popen of zcat): the file must be gzip
// that a real decompressor takes, and name what the kernel has and lacks
// in Linux's .config syntax.
func TestProcConfigGz(t *testing.T) {
	root := debianRootfs(t, shellPackages)
	script := "zcat /proc/config.gz | grep -E '^(CONFIG_EVENTFD|CONFIG_EPOLL|CONFIG_IKCONFIG_PROC)=y$|CONFIG_IO_URING is not set'; echo zcat=$?\n"
	initrd := withFiles(t, root.archive, map[string][]byte{"config.sh": []byte(script)})
	r := bootKernel(t, "256M", "init=/usr/bin/busybox -- sh /config.sh", 2*time.Minute, "-initrd", initrd)
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	for _, line := range []string{"CONFIG_EPOLL=y", "CONFIG_EVENTFD=y", "CONFIG_IKCONFIG_PROC=y", "# CONFIG_IO_URING is not set", "zcat=0"} {
		if !strings.Contains(r.console, line+"\n") && !strings.Contains(r.console, line+"\r\n") {
			t.Errorf("console lacks %q:\n%s", line, r.console)
		}
	}
}
