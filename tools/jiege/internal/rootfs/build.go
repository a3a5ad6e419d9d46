package rootfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// builder lays out and packs one flavour from already verified packages.
//
// Cache layout under root (<BuildDir>/rootfs):
//
//	apt/                       isolated apt configuration, lists and caches
//	debs/                      package files named as apt-get download names them
//	kernel/<sha>/              the linux-image package unpacked (linux flavour)
//	<flavor>-<key>/tree/       the unpacked root filesystem
//	packages-<set>-<key>/      the same for a package set (<set> hashes its name)
//	small-<flavor>-<key>/      the same without the 64 MiB file (SmallMemory)
//	<flavor>-<key>/meta.json   content list, nginx version, module order
//	<flavor>-<key>/rootfs-<variant>.cpio  the newc archive (variant = Init/Extra)
//	nonce/                     per-run archives with a nonce appended
//
// <key> hashes every input of the tree: the generator version, the flavour,
// the locked packages and all configuration text.
type builder struct {
	o       Options
	root    string
	set     string // the package set of the packages flavour
	entries []LockEntry
	debs    map[string]string
}

// meta is what a cached tree remembers about itself.
type meta struct {
	Files        []File
	NginxVersion string
	Kernel       string
	Modules      []string
}

func (b *builder) key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", generatorVersion, b.o.Flavor)
	if b.set != "" {
		fmt.Fprintf(h, "%s\n", b.set)
	}
	for _, e := range b.entries {
		fmt.Fprintf(h, "%s %s %s %s\n", e.Package, e.Version, e.Arch, e.SHA256)
	}
	writeMap(h, etcFiles())
	writeMap(h, smallContent)
	for _, f := range b.bigFiles() {
		fmt.Fprintf(h, "%s %d %s\n", f.path, f.size, f.seed)
	}
	if b.o.Flavor == Linux {
		fmt.Fprintf(h, "%s\n%s\n", strings.Join(linuxModules, ","), initTemplate)
	}
	if b.o.Flavor == Packages {
		fmt.Fprintf(h, "%s\n", configureVersion)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// cacheName is the prefix of this flavour's (and package set's) trees in
// the cache: trees with the same prefix and another key are stale.
func (b *builder) cacheName() string {
	name := string(b.o.Flavor)
	if b.o.Flavor == Packages {
		sum := sha256.Sum256([]byte(b.set))
		name += "-" + hex.EncodeToString(sum[:])[:8]
	}
	if b.o.SmallMemory { // kept beside the full tree: neither prunes the other
		name = "small-" + name
	}
	return name
}

func writeMap(w io.Writer, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s %d\n%s\n", k, len(m[k]), m[k])
	}
}

func (b *builder) build(ctx context.Context) (*Image, error) {
	start := time.Now()
	key := b.key()
	vdir := filepath.Join(b.root, b.cacheName()+"-"+key)
	tree := filepath.Join(vdir, "tree")
	metaPath := filepath.Join(vdir, "meta.json")
	var m meta
	if raw, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(raw, &m) == nil {
		fmt.Fprintf(b.o.Log, "rootfs: %s tree cached in %s\n", b.o.Flavor, vdir)
	} else {
		if err := os.RemoveAll(vdir); err != nil {
			return nil, err
		}
		mm, err := b.buildTree(ctx, tree)
		if err != nil {
			return nil, err
		}
		raw, err := json.MarshalIndent(mm, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := writeAtomic(metaPath, raw, 0o644); err != nil {
			return nil, err
		}
		m = *mm
		b.prune(vdir)
	}

	overrides, err := b.overrides()
	if err != nil {
		return nil, err
	}
	cpioPath := filepath.Join(vdir, "rootfs-"+variantKey(overrides)+".cpio")
	if _, err := os.Stat(cpioPath); err != nil {
		fmt.Fprintf(b.o.Log, "rootfs: packing %s\n", cpioPath)
		if err := packTree(cpioPath, tree, overrides, b.o.Flavor == Linux); err != nil {
			return nil, err
		}
	}
	img := &Image{CPIO: cpioPath, Dir: tree, Files: m.Files, NginxVersion: m.NginxVersion, Modules: m.Modules, Packages: b.entries}
	if m.Kernel != "" {
		img.Kernel = filepath.Join(b.root, m.Kernel)
	}
	if b.o.Nonce {
		n := newNonce()
		img.Nonce = &n
		out := b.o.Out
		if out == "" {
			out = filepath.Join(b.root, "nonce", fmt.Sprintf("%s-%s.cpio", b.o.Flavor, strings.TrimSuffix(strings.TrimPrefix(n.URLPath, "/nonce-"), ".txt")))
			cleanOld(filepath.Join(b.root, "nonce"), time.Hour)
		}
		if err := appendNonce(out, cpioPath, n); err != nil {
			return nil, err
		}
		img.CPIO = out
	} else if b.o.Out != "" {
		if err := copyFile(b.o.Out, cpioPath); err != nil {
			return nil, err
		}
		img.CPIO = b.o.Out
	}
	fmt.Fprintf(b.o.Log, "rootfs: %s ready in %.1fs: %s\n", b.o.Flavor, time.Since(start).Seconds(), img.CPIO)
	return img, nil
}

// overrides are the files that replace or join the tree in the archive.
func (b *builder) overrides() (map[string]override, error) {
	ov := map[string]override{}
	if b.o.Init != nil {
		ov["init"] = override{data: b.o.Init, mode: 0o755}
	}
	for p, data := range b.o.Extra {
		name := strings.TrimPrefix(filepath.Clean("/"+p), "/")
		if name == "" {
			return nil, fmt.Errorf("extra file %q has no name", p)
		}
		mode := uint32(0o644)
		if strings.HasPrefix(string(data), "#!") || strings.HasPrefix(string(data), "\x7fELF") {
			mode = 0o755
		}
		ov[name] = override{data: data, mode: mode}
	}
	return ov, nil
}

func variantKey(ov map[string]override) string {
	if len(ov) == 0 {
		return "base"
	}
	names := make([]string, 0, len(ov))
	for n := range ov {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %o %d\n", n, ov[n].mode, len(ov[n].data))
		h.Write(ov[n].data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// prune removes trees of the same flavour (and package set) built from
// other inputs.
func (b *builder) prune(keep string) {
	old, _ := filepath.Glob(filepath.Join(b.root, b.cacheName()+"-*"))
	for _, d := range old {
		if d != keep {
			fmt.Fprintf(b.o.Log, "rootfs: removing stale %s\n", d)
			os.RemoveAll(d)
		}
	}
}

func cleanOld(dir string, age time.Duration) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > age {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// buildTree unpacks the packages and writes our files into a fresh tree.
func (b *builder) buildTree(ctx context.Context, tree string) (*meta, error) {
	tmp := tree + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(b.o.Log, "rootfs: unpacking %d packages into %s\n", len(b.entries), tree)
	m := &meta{}
	for _, e := range b.entries {
		if e.Set == setLinux && linuxImageRe.MatchString(e.Package) {
			continue // the kernel is unpacked on its own, below
		}
		if e.Package == "nginx" {
			m.NginxVersion = upstreamVersion(e.Version)
		}
		if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", b.debs[e.Package], tmp).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dpkg-deb -x %s: %v: %s", b.debs[e.Package], err, out)
		}
	}
	if b.o.Flavor == Packages {
		if err := b.configure(ctx, tmp); err != nil {
			return nil, err
		}
		return m, finishTree(tmp, tree)
	}
	if m.NginxVersion == "" {
		return nil, fmt.Errorf("rootfs.lock has no nginx package")
	}
	if err := usrMerge(tmp); err != nil {
		return nil, err
	}
	// Debian's default site and page: only our server block may serve.
	for _, p := range []string{"etc/nginx/sites-enabled", "etc/nginx/sites-available", "etc/nginx/conf.d", "etc/nginx/modules-enabled", "var/www/html/index.nginx-debian.html"} {
		if err := os.RemoveAll(filepath.Join(tmp, p)); err != nil {
			return nil, err
		}
	}
	dirs := []struct {
		path string
		mode os.FileMode
	}{
		{"var/lib/nginx", 0o755}, {"var/log/nginx", 0o755}, {"run", 0o755}, {"tmp", 0o777 | os.ModeSticky},
		{"dev", 0o755}, {"proc", 0o555}, {"sys", 0o555}, {"root", 0o700}, {strings.TrimPrefix(WebRoot, "/"), 0o755},
	}
	for _, d := range dirs {
		p := filepath.Join(tmp, d.path)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chmod(p, d.mode); err != nil {
			return nil, err
		}
	}
	for p, text := range etcFiles() {
		if err := writeFile(filepath.Join(tmp, p), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	for p, text := range smallContent {
		if err := writeFile(filepath.Join(tmp, WebRoot, p), []byte(text), 0o644); err != nil {
			return nil, err
		}
		m.Files = append(m.Files, fileOf(p, []byte(text)))
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].URLPath < m.Files[j].URLPath })
	for _, bf := range b.bigFiles() {
		f, err := os.OpenFile(filepath.Join(tmp, WebRoot, bf.path), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		sum, err := bf.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		m.Files = append(m.Files, File{URLPath: bf.path, Size: bf.size, SHA256: sum})
	}
	if b.o.Flavor == Ours {
		// The program a kernel runs first (Linux's flavour gets an /init
		// script instead): nginx itself, as in a container.
		if err := os.Symlink("usr/sbin/nginx", filepath.Join(tmp, "init")); err != nil {
			return nil, err
		}
	}
	if b.o.Flavor == Linux {
		if err := b.addLinux(ctx, tmp, m); err != nil {
			return nil, err
		}
	}
	return m, finishTree(tmp, tree)
}

// finishTree fixes the times of the tree built in tmp and moves it in place.
func finishTree(tmp, tree string) error {
	if err := fixTimes(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, tree)
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	os.Remove(path) // may be a symlink from a package
	return os.WriteFile(path, data, mode)
}

// usrMerge moves top-level bin, sbin, lib and lib64 into /usr and replaces
// them with the links a merged-/usr Debian system has. /lib64 only appears
// when a package ships something there.
func usrMerge(tree string) error {
	for _, d := range []string{"bin", "sbin", "lib", "lib64"} {
		top := filepath.Join(tree, d)
		usr := filepath.Join(tree, "usr", d)
		st, err := os.Lstat(top)
		switch {
		case err == nil && st.IsDir():
			if err := mergeInto(top, usr); err != nil {
				return err
			}
			if err := os.RemoveAll(top); err != nil {
				return err
			}
		case err == nil:
			if err := os.Remove(top); err != nil {
				return err
			}
		case !os.IsNotExist(err):
			return err
		}
		if _, err := os.Stat(usr); err != nil {
			if d == "lib64" {
				continue
			}
			if err := os.MkdirAll(usr, 0o755); err != nil {
				return err
			}
		}
		if err := os.Symlink("usr/"+d, top); err != nil {
			return err
		}
	}
	return nil
}

// mergeInto moves every entry of src into dst, recursing into directories
// present on both sides.
func mergeInto(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		dst, err := os.Lstat(d)
		switch {
		case os.IsNotExist(err):
			if err := os.Rename(s, d); err != nil {
				return err
			}
		case err != nil:
			return err
		case e.IsDir() && dst.IsDir():
			if err := mergeInto(s, d); err != nil {
				return err
			}
		default:
			return fmt.Errorf("usr-merge: both %s and %s exist", s, d)
		}
	}
	return nil
}

// fixTimes sets every entry's modification time to fixedMTime.
func fixTimes(tree string) error {
	ts := []unix.Timespec{{Sec: fixedMTime}, {Sec: fixedMTime}}
	return filepath.WalkDir(tree, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW)
	})
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}
