package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/console"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// forkLine is what one attempt's kernel prints on every fork while it
// serves well.
const forkLine = "[ERROR] [fork] pid=2: trap_cx_addr=0xfffffffffffde000 sepc=0x4003d880 sp=0x3fffffff50"

// fakeGuest runs a stand-in for QEMU that prints console and then stays
// up, forwarding port.
func fakeGuest(t *testing.T, port int, lines ...string) *guest {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "console.log")
	cmd := exec.Command("sh", "-c", `printf '%s\n' "$@"; exec sleep 60`, "sh")
	cmd.Args = append(cmd.Args, lines...)
	in, err := qemu.StartCommand(context.Background(), cmd, port, logPath, nil, func() (int, int) { return 0, 0 })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Stop() })
	for deadline := time.Now().Add(5 * time.Second); in.ConsoleBytes() < int64(len(strings.Join(lines, "\n"))); {
		if time.Now().After(deadline) {
			t.Fatal("the stand-in printed nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &guest{Instance: in, follow: console.Follow(logPath, 0)}
}

// A line with trap registers while the server answers is a note; after
// it the kernel silent and the server not answering, it is the verdict.
func TestAliveTrapDump(t *testing.T) {
	v := &verifier{common: &common{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	g := fakeGuest(t, port, "kernel up", forkLine)
	failed := report.Failf(report.StageFingerprint, report.ClassFingerprint, time.Second, "404 page differs")
	s := v.alive(g, failed)
	if s.Class != report.ClassFingerprint || !strings.Contains(s.Detail, "console note") || !strings.Contains(s.Detail, "sepc=0x4003d880") {
		t.Errorf("server answering: %s %q, want the stage's own class and a console note", s.Class, s.Detail)
	}
	s = v.alive(g, report.Passf(report.StageContent, time.Second, "ok"))
	if !s.Passed() || s.Detail != "ok" {
		t.Errorf("the note came twice: %s %q", s.Status, s.Detail)
	}

	free, err := qemu.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	g = fakeGuest(t, free, "kernel up", forkLine)
	s = v.alive(g, report.Passf(report.StagePortOpen, time.Second, "answered"))
	if !s.Passed() || !strings.Contains(s.Detail, "console note") {
		t.Errorf("passed stage: %s %q, want passed with a note", s.Status, s.Detail)
	}
	s = v.alive(g, report.Failf(report.StageFirst200, report.ClassConnectRefused, time.Second, "no 200"))
	if s.Class != report.ClassKernelPanic || !strings.Contains(s.Detail, "sepc=0x4003d880") || !strings.Contains(s.Detail, "no 200") {
		t.Errorf("dump, then silence and no answer: %s %q, want kernel-panic quoting the dump", s.Class, s.Detail)
	}

	busy := []string{"kernel up", forkLine}
	for range 40 {
		busy = append(busy, "still printing")
	}
	g = fakeGuest(t, free, busy...)
	s = v.alive(g, report.Failf(report.StageFirst200, report.ClassConnectRefused, time.Second, "no 200"))
	if s.Class != report.ClassConnectRefused {
		t.Errorf("the kernel went on printing: %s %q, want the stage's own class", s.Class, s.Detail)
	}
}

// A stage that stopped answering says whether QEMU still runs and quotes
// the console's tail.
func TestAliveStoppedAnswering(t *testing.T) {
	v := &verifier{common: &common{}}
	free, err := qemu.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	g := fakeGuest(t, free, "kernel up", "init: killing nginx")
	s := v.alive(g, report.Failf(report.StageStability, report.ClassStoppedAnswering, time.Second, "the server stopped answering at request 51"))
	if s.Class != report.ClassStoppedAnswering || !strings.Contains(s.Detail, "QEMU still running") || !strings.Contains(s.Detail, "init: killing nginx") {
		t.Errorf("got %s %q", s.Class, s.Detail)
	}
}
