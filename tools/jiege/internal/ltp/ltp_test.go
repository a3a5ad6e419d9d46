package ltp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRuntest(t *testing.T) {
	in := `#DESCRIPTION:Kernel system calls
abort01 abort01

accept4_01 accept4_01
mmap10_1 mmap10 -a
fcntl_pipe cat /proc/x | fcntl01
`
	got, err := ParseRuntest(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Name: "abort01", Command: "abort01"}, {Name: "accept4_01", Command: "accept4_01"}, {Name: "mmap10_1", Command: "mmap10 -a"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if p := got[2].Program(); p != "mmap10" {
		t.Errorf("program of %q: %q", got[2].Command, p)
	}
}

// fakeGuest is a machine whose "QEMU" is a shell script standing for a
// guest that runs tests a, b, c, d: test b kills the kernel (the
// process ends mid-test), test c hangs it (no line, no exit), d passes.
func fakeGuest(t *testing.T) Machine {
	script := `start=$1
i=0
for name in a b c d; do
	if [ $i -ge $start ]; then
		printf 'LTP-START\t%d\t%s\n' $i $name
		case $name in
		b) echo "kernel panic: boom"; exit 0 ;;
		c) echo "stuck"; exec sleep 60 ;;
		esac
		printf 'LTP-RESULT\t%d\t%s\t%d\t0\t%s\n' $i $name $((i * 32)) "x.c:1: TFAIL: $name"
	fi
	i=$((i + 1))
done
echo LTP-DONE
`
	return Machine{Name: "fake", Silence: 500 * time.Millisecond, Command: func(ctx context.Context, start int) *exec.Cmd {
		return exec.CommandContext(ctx, "sh", "-c", script, "sh", fmt.Sprint(start))
	}}
}

func TestRunBootsAgainAfterADeadOrHungKernel(t *testing.T) {
	es := []Entry{{Name: "a", Family: "fa"}, {Name: "b", Family: "fb"}, {Name: "c", Family: "fc"}, {Name: "d", Family: "fd"}}
	rs, boots, err := Run(context.Background(), fakeGuest(t), es, filepath.Join(t.TempDir(), "console"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Name: "a", Family: "fa", Status: 0, First: "x.c:1: TFAIL: a"},
		{Name: "b", Family: "fb", Status: -1, Kernel: "died", First: "kernel panic: boom"},
		{Name: "c", Family: "fc", Status: -1, Kernel: "hung", First: "stuck"},
		{Name: "d", Family: "fd", Status: 96, First: "x.c:1: TFAIL: d"},
	}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("results:\n%+v\nwant\n%+v", rs, want)
	}
	if boots != 3 {
		t.Errorf("%d boots, want 3 (from a, c, d)", boots)
	}
	var verdicts []string
	for _, r := range rs {
		verdicts = append(verdicts, r.Verdict())
	}
	if got := strings.Join(verdicts, " "); got != "PASS DIED HUNG FAIL" {
		t.Errorf("verdicts %q", got)
	}
}

func TestResultsRoundTripAndTable(t *testing.T) {
	linux := []Result{
		{Name: "open01", Family: "open"},
		{Name: "open02", Family: "open", Status: 32},
		{Name: "kill01", Family: "kill"},
		{Name: "kill02", Family: "kill", TimedOut: true, Status: 137},
	}
	ours := []Result{
		{Name: "open01", Family: "open", Status: 1, First: "open01.c:9: TFAIL: a|b"},
		{Name: "open02", Family: "open", Status: 32},
		{Name: "kill01", Family: "kill"},
		{Name: "kill02", Family: "kill", Status: -1, Kernel: "hung", First: "..."},
	}
	var buf bytes.Buffer
	if err := WriteResults(&buf, []string{"header"}, ours); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ours) {
		t.Fatalf("read back %+v\nwant %+v", back, ours)
	}
	table := Table(linux, ours)
	for _, want := range []string{
		"4 LTP syscall tests ran on both kernels: 2 pass on Debian's Linux 6.12, 1 on ours",
		"| kill | 2 | 1 | 1 |\n",
		"| open | 2 | 1 | 0 |\n",
		"| **all** | 4 | 2 | 1 |\n",
		"1 tests pass on Linux and not on ours",
		"| open01 | open | FAIL | `open01.c:9: TFAIL: a\\|b` |\n",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
