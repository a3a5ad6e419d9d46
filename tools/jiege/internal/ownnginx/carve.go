package ownnginx

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// image is one riscv64 ELF carved out of a boot file: a file of its own,
// one inside an archive, or one embedded in another ELF's sections (a
// Rust kernel's include_bytes!).
type image struct {
	data   []byte
	soname string
	interp string
	needed []string
	nginx  bool // its own bytes, outside ELFs nested in it, name an nginx
}

// ELF64 header fields carve reads (little-endian).
const (
	ehdrSize  = 64
	phdrSize  = 56
	shdrSize  = 64
	emRISCV   = 243
	shtNobits = 8
)

// carve returns the riscv64 ELF images found anywhere in b, whole:
// each "\x7fELF" whose header is a 64-bit little-endian riscv64
// executable or shared object and whose extent (the furthest program
// segment, section or header table) lies inside b.
func carve(b []byte) []image {
	type span struct{ off, end int }
	var spans []span
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(elf.ELFMAG))
		if j < 0 {
			break
		}
		off := i + j
		if n := elfExtent(b[off:]); n > 0 {
			spans = append(spans, span{off, off + n})
		}
		i = off + 1
	}
	var out []image
	for k, s := range spans {
		data := b[s.off:s.end:s.end]
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			continue
		}
		im := image{data: data}
		if sn, err := f.DynString(elf.DT_SONAME); err == nil && len(sn) > 0 {
			im.soname = sn[0]
		}
		im.needed, _ = f.DynString(elf.DT_NEEDED)
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				if txt, err := io.ReadAll(p.Open()); err == nil {
					im.interp = strings.TrimRight(string(txt), "\x00")
				}
			}
		}
		// The ELF's own bytes: nested images (a kernel carrying nginx)
		// do not make their container an nginx.
		own, at := []byte(nil), s.off
		for _, inner := range spans[k+1:] {
			if inner.off >= s.end {
				break
			}
			if inner.off >= at {
				own = append(own, b[at:inner.off]...)
				at = max(at, inner.end)
			}
		}
		if at < s.end {
			own = append(own, b[at:s.end]...)
		}
		im.nginx = im.soname == "" && bytes.Contains(own, []byte("nginx version: "))
		out = append(out, im)
	}
	return out
}

// elfExtent returns the size of the riscv64 ELF executable or shared
// object at the start of b, or 0 when b does not start with a whole one.
func elfExtent(b []byte) int {
	if len(b) < ehdrSize || b[elf.EI_CLASS] != byte(elf.ELFCLASS64) || b[elf.EI_DATA] != byte(elf.ELFDATA2LSB) || b[elf.EI_VERSION] != 1 {
		return 0
	}
	le := binary.LittleEndian
	typ, machine := elf.Type(le.Uint16(b[16:])), le.Uint16(b[18:])
	if (typ != elf.ET_EXEC && typ != elf.ET_DYN) || machine != emRISCV || le.Uint16(b[52:]) != ehdrSize {
		return 0
	}
	phoff, shoff := le.Uint64(b[32:]), le.Uint64(b[40:])
	phentsize, phnum := le.Uint16(b[54:]), uint64(le.Uint16(b[56:]))
	shentsize, shnum := le.Uint16(b[58:]), uint64(le.Uint16(b[60:]))
	if (phnum > 0 && phentsize != phdrSize) || (shnum > 0 && shentsize != shdrSize) {
		return 0
	}
	size := uint64(len(b))
	end := uint64(ehdrSize)
	within := func(off, n uint64) bool { return off <= size && n <= size-off }
	if phnum > 0 {
		if !within(phoff, phnum*phdrSize) {
			return 0
		}
		end = max(end, phoff+phnum*phdrSize)
		for i := range phnum {
			p := b[phoff+i*phdrSize:]
			off, filesz := le.Uint64(p[8:]), le.Uint64(p[32:])
			if !within(off, filesz) {
				return 0
			}
			end = max(end, off+filesz)
		}
	}
	if shnum > 0 {
		if !within(shoff, shnum*shdrSize) {
			return 0
		}
		end = max(end, shoff+shnum*shdrSize)
		for i := range shnum {
			s := b[shoff+i*shdrSize:]
			if le.Uint32(s[4:]) == shtNobits {
				continue
			}
			off, n := le.Uint64(s[24:]), le.Uint64(s[32:])
			if !within(off, n) {
				return 0
			}
			end = max(end, off+n)
		}
	}
	return int(end)
}

// unpacked returns b and what gzip streams in it unpack to: the file
// itself gzip'd, or streams embedded in it.
func unpacked(b []byte) [][]byte {
	out := [][]byte{b}
	for i, n := 0, 0; n < maxEmbedTries; n++ {
		j := bytes.Index(b[i:], []byte{0x1f, 0x8b, 0x08})
		if j < 0 {
			break
		}
		zr, err := gzip.NewReader(bytes.NewReader(b[i+j:]))
		if err == nil {
			zr.Multistream(false)
			if u, _ := io.ReadAll(io.LimitReader(zr, maxUnpacked)); len(u) > 0 {
				out = append(out, u)
			}
		}
		i += j + 3
	}
	return out
}

// findCarved carves the riscv64 ELFs out of every source and builds a
// root filesystem from the nginx among them, its interpreter and the
// libraries it needs, found by their sonames; with the configuration
// and mime types carved out of the same files, when there.
func findCarved(sources []Source) (*Tree, error) {
	var images []image
	var blobs [][]byte
	from := map[int]Source{}
	for _, src := range sources {
		b, err := readBootFile(src.Path)
		if err != nil {
			continue
		}
		for _, u := range unpacked(b) {
			for _, im := range carve(u) {
				if im.nginx {
					from[len(images)] = src
				}
				images = append(images, im)
			}
			blobs = append(blobs, u)
		}
	}
	for i, im := range images {
		if im.nginx {
			return carvedTree(im, images, blobs, from[i])
		}
	}
	return nil, ErrNoNginx
}

func readBootFile(p string) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("not read: larger than %d MiB", maxFile>>20)
	}
	return os.ReadFile(p)
}

// libDirs are where dynamic loaders look (glibc's multiarch and lp64d
// directories, musl's /lib): all are the tree's lib.
var libDirs = map[string]string{
	"usr/lib": "../lib", "lib64": "lib", "usr/lib64": "../lib",
	"lib/riscv64-linux-gnu": ".", "lib/lp64d": ".",
}

func carvedTree(nginx image, images []image, blobs [][]byte, src Source) (*Tree, error) {
	bySoname := map[string]image{}
	for _, im := range images {
		if _, dup := bySoname[im.soname]; im.soname != "" && !dup {
			bySoname[im.soname] = im
		}
	}
	files := map[string][]byte{"usr/sbin/nginx": nginx.data}
	if nginx.interp != "" {
		ld, ok := bySoname[path.Base(nginx.interp)]
		if !ok {
			// musl's loader is its C library, named libc.musl-<arch>.so.1.
			ld, ok = bySoname[strings.Replace(path.Base(nginx.interp), "ld-musl-", "libc.musl-", 1)]
		}
		if !ok {
			return nil, fmt.Errorf("an nginx ELF is in %s %s, but not its interpreter %s", src.Option, src.Path, nginx.interp)
		}
		files[strings.TrimPrefix(path.Clean(nginx.interp), "/")] = ld.data
		bySoname[path.Base(nginx.interp)] = ld
	}
	seen := map[string]bool{}
	var missing []string
	queue := append([]string(nil), nginx.needed...)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		lib, ok := bySoname[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		files["lib/"+name] = lib.data
		queue = append(queue, lib.needed...)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("an nginx ELF is in %s %s, but not its libraries %s", src.Option, src.Path, strings.Join(missing, ", "))
	}
	dir, err := os.MkdirTemp("", "jiege-own-nginx-")
	if err != nil {
		return nil, err
	}
	t := &Tree{Dir: dir, Nginx: "usr/sbin/nginx", Source: src, Carved: true}
	if err := t.populate(files, blobs); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return t, nil
}

func (t *Tree) populate(files map[string][]byte, blobs [][]byte) error {
	if err := os.MkdirAll(t.Dir+"/lib", 0o755); err != nil {
		return err
	}
	for link, target := range libDirs {
		p, err := resolve(t.Dir, link, false)
		if err == nil {
			err = os.Symlink(target, p)
		}
		if err != nil {
			return err
		}
	}
	for rel, data := range files {
		p, err := resolve(t.Dir, rel, false)
		if err == nil {
			err = os.WriteFile(p, data, 0o755)
		}
		if err != nil {
			return err
		}
	}
	for _, b := range blobs {
		if t.conf == "" {
			t.conf = carveText(b, confStart)
		}
		if t.mimeTypes == "" {
			t.mimeTypes = carveText(b, typesStart)
		}
	}
	return nil
}

// Where a carved configuration's text is recognised: its http block, and
// the types block that is mime.types, each at a line's or a string's
// start.
var (
	confStart  = regexp.MustCompile(`http\s*\{`)
	typesStart = regexp.MustCompile(`types\s*\{`)
)

// carveText returns the configuration text in b around the first match
// of start at a line's or string's start: from the first of the
// configuration lines before it to the brace that closes its block.
func carveText(b []byte, start *regexp.Regexp) string {
	for _, loc := range start.FindAllIndex(b, -1) {
		if loc[0] > 0 && isText(b[loc[0]-1]) && b[loc[0]-1] != '\n' {
			continue
		}
		if text := textAround(b, loc); text != "" {
			return text
		}
	}
	return ""
}

func textAround(b []byte, loc []int) string {
	end, depth := loc[1], 1
	for ; end < len(b) && depth > 0; end++ {
		switch c := b[end]; {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case !isText(c):
			return ""
		}
	}
	if depth > 0 {
		return ""
	}
	begin := loc[0]
	for begin > 0 && b[begin-1] == '\n' {
		prev := begin - 1
		for prev > 0 && isText(b[prev-1]) && b[prev-1] != '\n' {
			prev--
		}
		if !isConfLine(b[prev : begin-1]) {
			break
		}
		begin = prev
	}
	return string(b[begin:end]) + "\n"
}

// isConfLine says whether line reads as a line of nginx configuration.
func isConfLine(line []byte) bool {
	for _, c := range line {
		if !isText(c) {
			return false
		}
	}
	l := bytes.TrimSpace(line)
	return len(l) == 0 || l[0] == '#' || bytes.HasSuffix(l, []byte(";")) || bytes.HasSuffix(l, []byte("{")) || bytes.HasSuffix(l, []byte("}"))
}

func isText(c byte) bool { return c >= ' ' && c < 0x7f || c == '\n' || c == '\t' || c == '\r' }

// errNoConf reports a carved nginx whose configuration was not carved.
var errNoConf = errors.New("no nginx configuration (an http block) in the files QEMU loads")

// placeConf writes a carved tree's configuration where its nginx reads
// it, with the mime types beside it.
func (t *Tree) placeConf(b Build) error {
	if t.conf == "" {
		return errNoConf
	}
	files := map[string]string{b.ConfPath: t.conf}
	if t.mimeTypes != "" {
		files[path.Join(path.Dir(b.ConfPath), "mime.types")] = t.mimeTypes
	}
	for guest, text := range files {
		p, err := resolve(t.Dir, strings.TrimPrefix(guest, "/"), false)
		if err != nil {
			return err
		}
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// PlaceIndex gives a carved tree the attempt's "/" (body and mtime, as
// the guest serves it): a kernel carries its nginx's binaries, not
// always its web root. It goes to the index file of the document root
// of the configuration's server on guestPort.
func (t *Tree) PlaceIndex(b Build, guestPort int, body []byte, mtime time.Time) error {
	if t.conf == "" {
		return errNoConf
	}
	ds, err := parseConf(t.conf)
	if err != nil {
		return err
	}
	root, index := "html", "index.html"
	take := func(ds []*directive) {
		for _, d := range ds {
			switch {
			case d.name == "root" && len(d.args) == 1:
				root = unquote(d.args[0])
			case d.name == "index" && len(d.args) > 0:
				index = unquote(d.args[0])
			}
		}
	}
	for _, http := range ds {
		if http.name != "http" {
			continue
		}
		take(http.block)
		for _, srv := range http.block {
			if srv.name == "server" && listensOn(srv.block, guestPort) {
				take(srv.block)
				break
			}
		}
	}
	if !path.IsAbs(root) {
		root = path.Join(b.Prefix, root)
	}
	guest := path.Join(root, index)
	p, err := resolve(t.Dir, strings.TrimPrefix(guest, "/"), false)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	return writeFile(t.Dir, strings.TrimPrefix(guest, "/"), body, 0o644, mtime)
}

// listensOn says whether a server block listens on port (nginx's
// default is 80).
func listensOn(server []*directive, port int) bool {
	want, listens := strconv.Itoa(port), false
	for _, d := range server {
		if d.name != "listen" || len(d.args) == 0 {
			continue
		}
		listens = true
		a := d.args[0]
		if a == want || strings.HasSuffix(a, ":"+want) {
			return true
		}
	}
	return !listens && port == 80
}
