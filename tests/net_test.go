package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a console buffer QEMU writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNetKernel boots the kernel with a virtio network device whose guest
// port guestPort is forwarded to a loopback port, waits until the console
// shows ready, and returns the host port. QEMU is killed when the test ends.
func startNetKernel(t *testing.T, cmdline, ready string, guestPort int) (int, *syncBuffer) {
	t.Helper()
	port, console := startKernelWith(t, "256M", cmdline, "", guestPort)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(console.String(), ready) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the console within a minute:\n%s", ready, console.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return port, console
}

// startKernelWith starts the kernel with mem, a command line, an optional
// initrd and a network device whose guestPort is forwarded to a free
// loopback port. QEMU is killed, by its PID, when the test ends.
func startKernelWith(t *testing.T, mem, cmdline, initrd string, guestPort int) (int, *syncBuffer) {
	t.Helper()
	port, console, _ := startKernelExit(t, 5*time.Minute, mem, cmdline, initrd, guestPort)
	return port, console
}

// startKernelExit is startKernelWith with the time the guest may run, that
// also reports QEMU's exit (nil for status 0) on the returned channel.
func startKernelExit(t *testing.T, limit time.Duration, mem, cmdline, initrd string, guestPort int) (int, *syncBuffer, <-chan error) {
	t.Helper()
	port, console, exited, _ := startKernelHarts(t, limit, mem, cmdline, initrd, guestPort, testHarts(t))
	return port, console, exited
}

// startKernelHarts is startKernelExit on the given number of harts; it
// also returns QEMU's process id.
func startKernelHarts(t *testing.T, limit time.Duration, mem, cmdline, initrd string, guestPort int, harts string) (int, *syncBuffer, <-chan error, int) {
	t.Helper()
	return startKernelFirmware(t, ownFirmware, limit, mem, cmdline, initrd, guestPort, harts)
}

// startKernelFirmware is startKernelHarts with the firmware and kernel
// arguments boot (ownFirmware or sbiFirmware).
func startKernelFirmware(t *testing.T, boot []string, limit time.Duration, mem, cmdline, initrd string, guestPort int, harts string) (int, *syncBuffer, <-chan error, int) {
	t.Helper()
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	console := &syncBuffer{}
	args := []string{"-machine", "virt", "-m", mem, "-nographic", "-monitor", "none",
		"-global", "virtio-mmio.force-legacy=false",
		"-netdev", fmt.Sprintf("user,id=n0,hostfwd=tcp:127.0.0.1:%d-:%d", port, guestPort),
		"-device", "virtio-net-device,netdev=n0"}
	args = append(append(args, boot...), "-append", cmdline, "-smp", harts)
	if initrd != "" {
		args = append(args, "-initrd", initrd)
	}
	cmd := exec.CommandContext(ctx, "qemu-system-riscv64", args...)
	cmd.Stdout, cmd.Stderr = console, console
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waited := make(chan struct{})
	go func() {
		exited <- cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		cancel()
		<-waited
	})
	return port, console, exited, cmd.Process.Pid
}

// echo sends data through one connection and checks it comes back intact.
func echo(port int, data []byte) error {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 15*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute))
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		werr <- err
	}()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("read after %d bytes: %w", len(got), err)
	}
	if err := <-werr; err != nil {
		return err
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("echoed data differs")
	}
	return nil
}

// TestNetEcho drives the network path from the host: QEMU's user network,
// the virtio-net driver, gVisor's netstack in the kernel and its TCP echo
// service; fresh connections one after another, then large transfers on
// several connections at once.
func TestNetEcho(t *testing.T) {
	port, console := startNetKernel(t, "netecho", "netecho: listening on tcp port 7", 7)
	if !strings.Contains(console.String(), "virtio network, irq") {
		t.Errorf("network device not in the boot log:\n%s", console.String())
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 30; i++ {
		msg := []byte(fmt.Sprintf("connection %d: %d", i, rng.Uint64()))
		if err := echo(port, msg); err != nil {
			t.Fatalf("connection %d: %v\nconsole:\n%s", i, err, console.String())
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		data := make([]byte, 512<<10)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := echo(port, data); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("large transfer: %v", err)
	}
}

// startInitServer boots bin as /init with a network device whose guest
// port 80 is forwarded to a loopback port, and waits for ready on the
// console. QEMU's exit is reported on the returned channel; it is killed
// when the test ends.
func startInitServer(t *testing.T, bin []byte, ready string) (int, *syncBuffer, <-chan error) {
	t.Helper()
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	console := &syncBuffer{}
	cmd := exec.CommandContext(ctx, "qemu-system-riscv64", "-machine", "virt", "-m", "256M", "-nographic", "-monitor", "none",
		"-global", "virtio-mmio.force-legacy=false",
		"-netdev", fmt.Sprintf("user,id=n0,hostfwd=tcp:127.0.0.1:%d-:80", port),
		"-device", "virtio-net-device,netdev=n0",
		"-bios", filepath.Join(repoRoot, "build/tramp.bin"),
		"-kernel", filepath.Join(repoRoot, "build/kernel.elf"),
		"-initrd", initramfs(t, bin, nil))
	cmd.Stdout, cmd.Stderr = console, console
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(cancel)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(console.String(), ready) {
		if time.Now().After(deadline) {
			t.Fatalf("server did not start:\n%s", console.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return port, console, exited
}

// expectExit waits for QEMU to exit with status 0 and the console to hold last.
func expectExit(t *testing.T, exited <-chan error, console *syncBuffer, last string) {
	t.Helper()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("QEMU: %v (want exit status 0)\n%s", err, console.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("server did not exit after the last request:\n%s", console.String())
	}
	if !strings.Contains(console.String(), last) {
		t.Errorf("no %q line:\n%s", last, console.String())
	}
}

// get fetches / and checks the body.
func get(client *http.Client, port int, want string) error {
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || (want != "" && string(body) != want) {
		return fmt.Errorf("status %d, body %q, want %q", resp.StatusCode, body, want)
	}
	return nil
}

// TestUserHTTPServer runs a C program that serves HTTP through the socket
// system calls (socket, setsockopt, bind, listen, getsockname, accept4,
// read, write, close) as /init, fetches from it from the host, and expects
// it to exit 0 after the last request.
func TestUserHTTPServer(t *testing.T) {
	port, console, exited := startInitServer(t, crossCompile(t, "httpserver.c"), "server: listening on port 80")
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 1; i <= 20; i++ {
		if err := get(client, port, fmt.Sprintf("request %d from 10.0.2.2\n", i)); err != nil {
			t.Fatalf("request %d: %v\nconsole:\n%s", i, err, console.String())
		}
	}
	expectExit(t, exited, console, "server: served 20 requests")
}

// TestUserEpollServer runs an event-driven server in nginx's style
// (non-blocking sockets, edge-triggered epoll, eventfd, keep-alive) and
// drives it with keep-alive, fresh and concurrent connections.
func TestUserEpollServer(t *testing.T) {
	port, console, exited := startInitServer(t, crossCompile(t, "epollserver.c"), "server: listening on port 80 with epoll")
	keepAlive := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
	for i := 0; i < 20; i++ {
		if err := get(keepAlive, port, ""); err != nil {
			t.Fatalf("keep-alive request %d: %v\nconsole:\n%s", i, err, console.String())
		}
	}
	fresh := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < 20; i++ {
		if err := get(fresh, port, ""); err != nil {
			t.Fatalf("fresh request %d: %v\nconsole:\n%s", i, err, console.String())
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for g := 0; g < 5; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
			for i := 0; i < 4; i++ {
				if err := get(c, port, ""); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent request: %v", err)
	}
	expectExit(t, exited, console, "server: served 60 requests, eventfd counted 1")
}
