package ownnginx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startTimeout bounds nginx -V and the wait for the oracle's first answer.
const startTimeout = 60 * time.Second

// Build is what `nginx -V` says about a binary.
type Build struct {
	Version   string // e.g. "1.26.3"
	Prefix    string // --prefix, else /usr/local/nginx
	ConfPath  string // --conf-path, or the prefix's conf/nginx.conf
	Without   map[string]bool
	Configure string // the configure arguments
}

// Debian is Debian's nginx as jiege fetches it: its version and the
// binary from its package.
type Debian struct {
	Version string
	Binary  string // host path of usr/sbin/nginx from Debian's package
}

// Official says whether the tree's nginx is Debian's official build:
// byte for byte the binary of Debian's package when the versions match;
// otherwise unknown, with what the configure arguments suggest.
func (t *Tree) Official(b Build, deb Debian) string {
	sum, err := fileSHA256(filepath.Join(t.Dir, t.Nginx))
	if err != nil {
		return "unknown: " + err.Error()
	}
	short := sum[:16]
	debianish := strings.Contains(b.Configure, "-ffile-prefix-map=/build/") || strings.Contains(b.Configure, "/usr/share/nginx") && strings.Contains(b.Configure, "--conf-path=/etc/nginx/nginx.conf")
	switch {
	case deb.Binary != "" && b.Version == deb.Version:
		want, err := fileSHA256(deb.Binary)
		if err != nil {
			return "unknown: Debian's binary not read: " + err.Error()
		}
		if want == sum {
			return fmt.Sprintf("the official Debian build (sha256 %s..., byte for byte the nginx of Debian's package %s that jiege fetches)", short, deb.Version)
		}
		return fmt.Sprintf("not Debian's build: nginx %s with sha256 %s..., Debian's package of that version has %s...", b.Version, short, want[:16])
	case debianish:
		return fmt.Sprintf("unknown: nginx %s (sha256 %s...) is not the version jiege fetches from Debian (%s); its configure arguments look like a Debian build", b.Version, short, deb.Version)
	}
	return fmt.Sprintf("unknown: nginx %s (sha256 %s...) is not the version jiege fetches from Debian (%s), and its configure arguments are not Debian's (another distribution or a build of its own)", b.Version, short, deb.Version)
}

func fileSHA256(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

var versionRE = regexp.MustCompile(`nginx version: nginx/(\S+)`)

// Inspect runs `nginx -V` under qemu-riscv64 with the tree as its root.
func (t *Tree) Inspect(ctx context.Context) (Build, error) {
	qemu, err := exec.LookPath("qemu-riscv64")
	if err != nil {
		return Build{}, fmt.Errorf("the attempt's nginx needs qemu-riscv64 (Debian package qemu-user): %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, qemu, "-L", t.Dir, filepath.Join(t.Dir, t.Nginx), "-V").CombinedOutput()
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return Build{}, fmt.Errorf("nginx -V under qemu-riscv64: %v: %s", err, bytes.TrimSpace(out))
	}
	b := Build{Version: string(m[1]), Without: map[string]bool{}}
	if _, c, ok := strings.Cut(string(out), "configure arguments:"); ok {
		b.Configure = strings.TrimSpace(c)
	}
	prefix := "/usr/local/nginx"
	for _, a := range strings.Fields(b.Configure) {
		switch {
		case strings.HasPrefix(a, "--prefix="):
			prefix = strings.TrimPrefix(a, "--prefix=")
		case strings.HasPrefix(a, "--conf-path="):
			b.ConfPath = strings.TrimPrefix(a, "--conf-path=")
		case strings.HasPrefix(a, "--without-") && strings.HasSuffix(a, "_module"):
			b.Without[strings.TrimSuffix(strings.TrimPrefix(a, "--without-"), "_module")] = true
		}
	}
	b.Prefix = prefix
	if b.ConfPath == "" {
		b.ConfPath = "conf/nginx.conf"
	}
	if !path.IsAbs(b.ConfPath) {
		b.ConfPath = path.Join(prefix, b.ConfPath)
	}
	return b, nil
}

// Start runs the tree's nginx under qemu-riscv64 with the attempt's own
// configuration, rewritten (rewriteConf) to serve what the guest serves
// on guestPort on 127.0.0.1:port. stop ends it and removes its files.
func (t *Tree) Start(ctx context.Context, b Build, guestPort, port int) (stop func() error, err error) {
	qemu, err := exec.LookPath("qemu-riscv64")
	if err != nil {
		return nil, fmt.Errorf("the attempt's nginx needs qemu-riscv64 (Debian package qemu-user): %v", err)
	}
	if t.Carved {
		if err := t.placeConf(b); err != nil {
			return nil, err
		}
	}
	confHost, err := resolve(t.Dir, strings.TrimPrefix(b.ConfPath, "/"), true)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(confHost)
	if err != nil {
		return nil, fmt.Errorf("its configuration %s is not in the attempt's files", b.ConfPath)
	}
	tmp, err := os.MkdirTemp("", "jiege-own-oracle-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (func() error, error) {
		os.RemoveAll(tmp)
		return nil, err
	}
	conf, err := rewriteConf(string(text), confRewrite{
		tree: t.Dir, confDir: path.Dir(b.ConfPath), guestPort: guestPort, port: port, free: freePort,
		tmp: tmp, asRoot: os.Geteuid() == 0, without: b.Without,
	})
	if err != nil {
		return fail(fmt.Errorf("%s: %w", b.ConfPath, err))
	}
	if os.Geteuid() == 0 {
		if err := ensureRoot(t.Dir); err != nil {
			return fail(err)
		}
	}
	confPath := filepath.Join(tmp, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return fail(err)
	}
	logf, err := os.Create(filepath.Join(tmp, "qemu.log"))
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command(qemu, "-L", t.Dir, filepath.Join(t.Dir, t.Nginx), "-p", tmp+"/", "-c", confPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Workers are forked qemu processes: a group lets stop reach them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fail(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	pgid := cmd.Process.Pid
	stop = func() error {
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
		syscall.Kill(-pgid, syscall.SIGKILL) // orphaned workers
		return os.RemoveAll(tmp)
	}
	if err := waitHTTP(ctx, port, done); err != nil {
		out, _ := os.ReadFile(filepath.Join(tmp, "qemu.log"))
		elog, _ := os.ReadFile(filepath.Join(tmp, "error.log"))
		stop()
		return nil, fmt.Errorf("the attempt's nginx under qemu-riscv64: %v; output: %s; error log: %s", err,
			clip(strings.TrimSpace(string(out)), 400), clip(strings.TrimSpace(string(elog)), 400))
	}
	return stop, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// ensureRoot gives the tree's /etc/passwd and /etc/group a root entry:
// nginx started as root looks up the user its workers run as (root,
// set by rewriteConf) in the tree, through qemu-riscv64's -L.
func ensureRoot(dir string) error {
	for _, f := range []struct{ name, line string }{
		{"etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"},
		{"etc/group", "root:x:0:\n"},
	} {
		p, err := resolve(dir, f.name, true)
		if err != nil {
			return err
		}
		b, _ := os.ReadFile(p)
		if bytes.HasPrefix(b, []byte("root:")) || bytes.Contains(b, []byte("\nroot:")) {
			continue
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		if err := os.WriteFile(p, append(b, f.line...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP polls until the server answers any HTTP response.
func waitHTTP(ctx context.Context, port int, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before answering")
		case <-ctx.Done():
			return fmt.Errorf("no answer on %s: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
