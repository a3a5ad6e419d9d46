package rootfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// oracleStartTimeout bounds how long nginx under qemu-user may take to answer.
const oracleStartTimeout = 60 * time.Second

// StartOracle runs the tree's nginx under qemu-riscv64 on 127.0.0.1:port:
// the same binary, libraries, mime types and content, with a configuration
// derived from ours (listen address, paths in a temporary directory, one
// worker, the current user). qemu-riscv64 -L makes the dynamic loader and
// libraries, and absolute paths that exist in the tree, resolve inside it.
// The image's nonce, if any, is served too. stop kills the process group it
// started and removes the temporary directory.
func StartOracle(ctx context.Context, img *Image, port int) (stop func() error, err error) {
	return StartOracleWith(ctx, img, port, OracleOptions{})
}

// OracleOptions change the oracle's configuration.
type OracleOptions struct {
	// Index, when set, replaces the document root by one index.html with
	// these bytes and IndexModTime: the oracle then serves "/" as an
	// attempt whose own root filesystem jiege does not know.
	Index        []byte
	IndexModTime time.Time
	// Server holds extra directives for the server block (tests: an
	// nginx configured otherwise, e.g. "gzip on;").
	Server string
}

// StartOracleWith is StartOracle with the options applied.
func StartOracleWith(ctx context.Context, img *Image, port int, o OracleOptions) (stop func() error, err error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("oracle: bad port %d", port)
	}
	qemu, err := exec.LookPath("qemu-riscv64")
	if err != nil {
		return nil, fmt.Errorf("oracle needs qemu-riscv64 (Debian package qemu-user): %v", err)
	}
	// A server already on the port would answer in nginx's place.
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("oracle: port %d is not free: %v", port, err)
	}
	l.Close()
	tmp, err := os.MkdirTemp("", "jiege-oracle-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (func() error, error) {
		os.RemoveAll(tmp)
		return nil, err
	}
	p := ConfParams{
		WorkerProcesses: "1",
		Listen:          "127.0.0.1:" + strconv.Itoa(port),
		Pid:             filepath.Join(tmp, "nginx.pid"),
		ErrorLog:        filepath.Join(tmp, "error.log"),
		AccessLog:       filepath.Join(tmp, "access.log"),
		Root:            filepath.Join(img.Dir, WebRoot),
		MimeTypes:       filepath.Join(img.Dir, "etc/nginx/mime.types"),
		TempDir:         tmp,
	}
	if os.Geteuid() == 0 {
		// As root, nginx would otherwise switch its workers to "nobody".
		p.User = "root root"
	}
	p.Server = o.Server
	if o.Index != nil {
		p.Root = filepath.Join(tmp, "root")
		f := filepath.Join(p.Root, "index.html")
		if err := writeFile(f, o.Index, 0o644); err != nil {
			return fail(err)
		}
		if err := os.Chtimes(f, o.IndexModTime, o.IndexModTime); err != nil {
			return fail(err)
		}
	}
	if img.Nonce != nil {
		ndir := filepath.Join(tmp, "nonce")
		if err := writeFile(filepath.Join(ndir, img.Nonce.URLPath), img.Nonce.Content, 0o644); err != nil {
			return fail(err)
		}
		p.ExactFiles = map[string]string{img.Nonce.URLPath: ndir}
	}
	conf := filepath.Join(tmp, "nginx.conf")
	if err := os.WriteFile(conf, []byte(NginxConf(p)), 0o644); err != nil {
		return fail(err)
	}
	logf, err := os.Create(filepath.Join(tmp, "qemu.log"))
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command(qemu, "-L", img.Dir, filepath.Join(img.Dir, "usr/sbin/nginx"),
		"-p", tmp+"/", "-c", conf, "-e", p.ErrorLog)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Workers are forked qemu processes: a group lets stop reach them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
		select {
		case <-done:
		default:
			syscall.Kill(pgid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				syscall.Kill(-pgid, syscall.SIGKILL)
				<-done
			}
		}
		// Orphaned workers, if the master died first.
		syscall.Kill(-pgid, syscall.SIGKILL)
		return os.RemoveAll(tmp)
	}
	if err := waitHTTP(ctx, port, done); err != nil {
		logText, _ := os.ReadFile(filepath.Join(tmp, "qemu.log"))
		errText, _ := os.ReadFile(p.ErrorLog)
		stop()
		return nil, fmt.Errorf("oracle nginx: %v\nqemu output: %s\nerror log: %s", err,
			strings.TrimSpace(string(logText)), strings.TrimSpace(string(errText)))
	}
	return stop, nil
}

// waitHTTP polls until the server answers any HTTP response.
func waitHTTP(ctx context.Context, port int, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, oracleStartTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
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
