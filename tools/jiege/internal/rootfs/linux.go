package rootfs

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
)

// linuxModules are the modules Debian's Linux needs to reach the network on
// QEMU's virt machine; their dependencies are found from each module's
// .modinfo "depends=" (the package ships no modules.dep).
var linuxModules = []string{"virtio_mmio", "failover", "net_failover", "virtio_net"}

// initTemplate is the Linux flavour's /init: mount the kernel filesystems,
// load the modules, configure QEMU user networking's guest address and run
// the same nginx with the same configuration as PID 1.
const initTemplate = `#!/usr/bin/busybox sh
bb=/usr/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev
{{range .}}$bb insmod {{.}} || echo "init: insmod {{.}} failed"
{{end}}i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do $bb sleep 0.1; i=$((i+1)); done
$bb ip link set lo up
$bb ip addr add 10.0.2.15/24 dev eth0
$bb ip link set eth0 up
$bb ip route add default via 10.0.2.2
echo "init: eth0 10.0.2.15/24, starting nginx"
exec /usr/sbin/nginx
`

// addLinux adds the kernel modules and /init to the tree and records the
// kernel Image. busybox-static was unpacked with the other packages.
func (b *builder) addLinux(ctx context.Context, tree string, m *meta) error {
	var kent LockEntry
	for _, e := range b.entries {
		if linuxImageRe.MatchString(e.Package) {
			kent = e
		}
	}
	if kent.Package == "" {
		return fmt.Errorf("rootfs.lock has no linux-image package")
	}
	if _, err := os.Stat(filepath.Join(tree, "usr/bin/busybox")); err != nil {
		return fmt.Errorf("busybox-static did not provide /usr/bin/busybox: %v", err)
	}
	rel := filepath.Join("kernel", kent.SHA256[:16])
	kdir := filepath.Join(b.root, rel)
	if _, err := os.Stat(filepath.Join(kdir, ".ok")); err != nil {
		fmt.Fprintf(b.o.Log, "rootfs: unpacking %s\n", kent.Filename())
		os.RemoveAll(kdir)
		if err := os.MkdirAll(kdir, 0o755); err != nil {
			return err
		}
		if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", b.debs[kent.Package], kdir).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg-deb -x %s: %v: %s", b.debs[kent.Package], err, out)
		}
		if err := os.WriteFile(filepath.Join(kdir, ".ok"), nil, 0o644); err != nil {
			return err
		}
	}
	vers, err := filepath.Glob(filepath.Join(kdir, "usr/lib/modules/*"))
	if err != nil || len(vers) != 1 {
		return fmt.Errorf("want one module directory in %s, found %v", kdir, vers)
	}
	kver := filepath.Base(vers[0])
	image := filepath.Join("boot", "vmlinux-"+kver)
	if err := checkImage(filepath.Join(kdir, image)); err != nil {
		return err
	}
	m.Kernel = filepath.Join(rel, image)

	index, err := moduleIndex(vers[0])
	if err != nil {
		return err
	}
	order, kos, err := resolveModules(vers[0], index, linuxModules)
	if err != nil {
		return err
	}
	var paths []string
	for _, name := range order {
		relKo := strings.TrimSuffix(index[name], ".xz")
		dst := filepath.Join("/usr/lib/modules", kver, relKo)
		if err := writeFile(filepath.Join(tree, dst), kos[name], 0o644); err != nil {
			return err
		}
		paths = append(paths, dst)
	}
	m.Modules = order
	var init bytes.Buffer
	if err := template.Must(template.New("init").Parse(initTemplate)).Execute(&init, paths); err != nil {
		return err
	}
	return writeFile(filepath.Join(tree, "init"), init.Bytes(), 0o755)
}

// checkImage checks the RISC-V Linux Image header: an EFI stub ("MZ"), the
// magic "RISCV\0\0\0" at 0x30 and "RSC\x05" at 0x38. QEMU's -kernel loads
// such an Image, with OpenSBI (-bios default) underneath.
func checkImage(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [64]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return fmt.Errorf("%s: %v", p, err)
	}
	if string(h[0:2]) != "MZ" || string(h[0x30:0x38]) != "RISCV\x00\x00\x00" || string(h[0x38:0x3c]) != "RSC\x05" {
		return fmt.Errorf("%s is not a RISC-V Linux Image (EFI stub)", p)
	}
	return nil
}

// moduleIndex maps module names (with '-' as '_') to their path relative to
// the module directory.
func moduleIndex(modDir string) (map[string]string, error) {
	idx := map[string]string{}
	err := filepath.WalkDir(filepath.Join(modDir, "kernel"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := d.Name()
		name, ok := strings.CutSuffix(base, ".ko.xz")
		if !ok {
			name, ok = strings.CutSuffix(base, ".ko")
		}
		if ok {
			rel, _ := filepath.Rel(modDir, p)
			idx[strings.ReplaceAll(name, "-", "_")] = rel
		}
		return nil
	})
	return idx, err
}

// resolveModules returns the modules to load, dependencies first, and their
// decompressed contents.
func resolveModules(modDir string, index map[string]string, want []string) ([]string, map[string][]byte, error) {
	return resolveWith(want, func(name string) ([]byte, error) {
		rel, ok := index[name]
		if !ok {
			return nil, fmt.Errorf("kernel module %s not found in the linux-image package", name)
		}
		return readModule(filepath.Join(modDir, rel))
	})
}

// resolveWith orders want and their dependencies (post-order depth-first),
// reading each module through load.
func resolveWith(want []string, load func(string) ([]byte, error)) ([]string, map[string][]byte, error) {
	var order []string
	kos := map[string][]byte{}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string) error
	visit = func(name string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("kernel module dependency cycle at %s", name)
		case 2:
			return nil
		}
		state[name] = 1
		ko, err := load(name)
		if err != nil {
			return err
		}
		deps, err := moduleDepends(ko)
		if err != nil {
			return fmt.Errorf("module %s: %v", name, err)
		}
		for _, d := range deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[name] = 2
		kos[name] = ko
		order = append(order, name)
		return nil
	}
	for _, w := range want {
		if err := visit(w); err != nil {
			return nil, nil, err
		}
	}
	return order, kos, nil
}

// readModule returns a module's ELF bytes, decompressing .ko.xz with the xz
// tool (the standard library has no xz decoder).
func readModule(p string) ([]byte, error) {
	if !strings.HasSuffix(p, ".xz") {
		return os.ReadFile(p)
	}
	out, err := exec.Command("xz", "-dc", p).Output()
	if err != nil {
		return nil, fmt.Errorf("xz -dc %s: %v (is xz-utils installed?)", p, err)
	}
	return out, nil
}

// moduleDepends reads "depends=" from a module's .modinfo section: NUL
// separated key=value strings.
func moduleDepends(ko []byte) ([]string, error) {
	f, err := elf.NewFile(bytes.NewReader(ko))
	if err != nil {
		return nil, err
	}
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("no .modinfo section")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	var deps []string
	for _, kv := range bytes.Split(data, []byte{0}) {
		v, ok := bytes.CutPrefix(kv, []byte("depends="))
		if !ok {
			continue
		}
		for _, d := range strings.Split(string(v), ",") {
			if d = strings.TrimSpace(d); d != "" {
				deps = append(deps, strings.ReplaceAll(d, "-", "_"))
			}
		}
	}
	return deps, nil
}
