package rootfs

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
)

// WebRoot is the document root inside the rootfs.
const WebRoot = "/var/www/html"

// generatorVersion is part of every cache key: bump it when the code that
// lays out the tree or packs the archive changes what it produces.
const generatorVersion = "jiege-rootfs-2"

// fixedMTime is the modification time of every file in the tree and the
// archive (2025-01-01 UTC), so Last-Modified and ETag agree between the
// oracle and any kernel serving the archive, and the archive is reproducible.
const fixedMTime = 1735689600

// bigFile is generated content: deterministic pseudo-random bytes.
type bigFile struct {
	path string // URL path under the web root
	size int64
	seed string
}

var bigFiles = []bigFile{
	{"/1m.bin", 1 << 20, "jiege rootfs 1 MiB"},
	{"/64m.bin", 64 << 20, "jiege rootfs 64 MiB"},
}

// smallMemoryLimit is the largest generated file in a SmallMemory tree.
const smallMemoryLimit = 1 << 20

// SmallMemoryBelow is the guest RAM under which jiege builds SmallMemory
// trees: at 128 MiB, the 64 MiB file would leave nginx too little.
const SmallMemoryBelow = 256 << 20

// bigFiles returns the generated files of this tree.
func (b *builder) bigFiles() []bigFile {
	var out []bigFile
	for _, f := range bigFiles {
		if !b.o.SmallMemory || f.size <= smallMemoryLimit {
			out = append(out, f)
		}
	}
	return out
}

// write generates the file's content into w and returns its sha256.
func (b bigFile) write(w io.Writer) (string, error) {
	seed := sha256.Sum256([]byte(b.seed))
	src := rand.NewChaCha8(seed)
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for left := b.size; left > 0; {
		n := min(left, int64(len(buf)))
		_, _ = src.Read(buf[:n]) // ChaCha8.Read never fails
		h.Write(buf[:n])
		if _, err := w.Write(buf[:n]); err != nil {
			return "", err
		}
		left -= n
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// smallContent is the fixed test content under the web root: an index, a
// tree in which a missing path gives 404, and a directory with autoindex on.
var smallContent = map[string]string{
	"/index.html": `<!DOCTYPE html>
<html>
<head><title>Jiege</title></head>
<body>
<h1>Jiege: Debian's nginx on a RISC-V kernel</h1>
<p>If you can read this, nginx served it.</p>
<ul><li><a href="/docs/">docs</a></li><li><a href="/files/">files</a></li></ul>
</body>
</html>
`,
	"/docs/index.html":      "<!DOCTYPE html>\n<html><body><p>docs index</p><a href=\"guide.txt\">guide</a></body></html>\n",
	"/docs/guide.txt":       "A plain text file in a tree where missing paths give 404.\n",
	"/docs/deep/nested.txt": "Nested two levels down.\n",
	"/files/alpha.txt":      "alpha\n",
	"/files/beta.txt":       "beta beta\n",
	"/files/sub/gamma.txt":  "gamma gamma gamma\n",
}

func fileOf(urlPath string, data []byte) File {
	sum := sha256.Sum256(data)
	return File{URLPath: urlPath, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Content: data}
}

// etcFiles are the configuration files we write into the tree.
func etcFiles() map[string]string {
	return map[string]string{
		"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\n" +
			"www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"/etc/group": "root:x:0:\n" +
			"www-data:x:33:\n" +
			"nogroup:x:65534:\n",
		"/etc/nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n",
		"/etc/hosts":         "127.0.0.1 localhost\n::1 localhost\n",
		"/etc/hostname":      "jiege\n",
		"/etc/nginx/nginx.conf": NginxConf(ConfParams{
			User: "www-data", WorkerProcesses: "auto", Listen: "80 default_server",
			Pid: "/run/nginx.pid", ErrorLog: "stderr", AccessLog: "/var/log/nginx/access.log",
			Root: WebRoot, MimeTypes: "/etc/nginx/mime.types",
		}),
	}
}

// ConfParams are the parts of nginx.conf that differ between the deployed
// configuration and the oracle's.
type ConfParams struct {
	User            string // empty: no user directive
	WorkerProcesses string
	Listen          string
	Pid             string
	ErrorLog        string
	AccessLog       string
	Root            string
	MimeTypes       string
	TempDir         string            // non-empty: all temp paths under it
	ExactFiles      map[string]string // URL path -> directory to serve it from (oracle's nonce)
	Server          string            // extra directives for the server block
}

// NginxConf renders nginx.conf. The deployed one is what a real server would
// run: a master with workers dropping to www-data, sendfile, keep-alive, an
// access log, errors to stderr, in the foreground.
func NginxConf(p ConfParams) string {
	var b strings.Builder
	b.WriteString("# nginx.conf written by jiege's rootfs builder.\n")
	if p.User != "" {
		fmt.Fprintf(&b, "user %s;\n", p.User)
	}
	fmt.Fprintf(&b, "worker_processes %s;\nmaster_process on;\ndaemon off;\npid %s;\nerror_log %s;\n\n", p.WorkerProcesses, p.Pid, p.ErrorLog)
	b.WriteString("events {\n    worker_connections 1024;\n}\n\nhttp {\n")
	fmt.Fprintf(&b, "    include %s;\n    default_type application/octet-stream;\n", p.MimeTypes)
	b.WriteString("    sendfile on;\n    tcp_nopush on;\n    keepalive_timeout 65;\n")
	// The stability bar sends 3,000 requests on one keep-alive connection;
	// nginx's default of 1,000 would close it in the middle.
	b.WriteString("    keepalive_requests 10000;\n")
	fmt.Fprintf(&b, "    access_log %s;\n", p.AccessLog)
	if p.TempDir != "" {
		for _, k := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
			fmt.Fprintf(&b, "    %s_temp_path %s/%s;\n", k, p.TempDir, k)
		}
	}
	fmt.Fprintf(&b, "\n    server {\n        listen %s;\n        server_name _;\n        root %s;\n        index index.html;\n\n", p.Listen, p.Root)
	if p.Server != "" {
		fmt.Fprintf(&b, "        %s\n", p.Server)
	}
	b.WriteString("        location /files/ {\n            autoindex on;\n        }\n")
	var exact []string
	for k := range p.ExactFiles {
		exact = append(exact, k)
	}
	sort.Strings(exact)
	for _, k := range exact {
		fmt.Fprintf(&b, "\n        location = %s {\n            root %s;\n        }\n", k, p.ExactFiles[k])
	}
	b.WriteString("    }\n}\n")
	return b.String()
}

// newNonce makes a fresh random text file for one run.
func newNonce() File {
	var id [8]byte
	var body [2048]byte
	crand.Read(id[:])
	crand.Read(body[:])
	name := "/nonce-" + hex.EncodeToString(id[:]) + ".txt"
	data := []byte("jiege nonce " + hex.EncodeToString(id[:]) + "\n" + hex.EncodeToString(body[:]) + "\n")
	return fileOf(name, data)
}
