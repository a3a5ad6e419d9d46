package attempt

import (
	"errors"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"netdev rule on port 80",
			"-machine virt -netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0",
			"-machine virt -netdev user,id=net0,hostfwd=tcp:127.0.0.1:5555-:80 -device virtio-net-device,netdev=net0"},
		{"double dash, explicit addresses",
			"--netdev user,id=n,hostfwd=tcp:0.0.0.0:80-10.0.2.15:80",
			"--netdev user,id=n,hostfwd=tcp:127.0.0.1:5555-10.0.2.15:80"},
		{"empty protocol",
			"-netdev user,id=n,hostfwd=::9000-:80",
			"-netdev user,id=n,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"type= key",
			"-netdev type=user,id=n,hostfwd=tcp::1-:80",
			"-netdev type=user,id=n,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"nic",
			"-nic user,model=virtio-net-device,hostfwd=tcp:127.0.0.1:8080-:80",
			"-nic user,model=virtio-net-device,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"legacy net",
			"-net nic -net user,hostfwd=tcp::8080-:80",
			"-net nic -net user,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"other rules move to free loopback ports, udp untouched",
			"-netdev user,id=n,hostfwd=tcp::2222-:22,hostfwd=tcp::8080-:80,hostfwd=udp::53-:53",
			"-netdev user,id=n,hostfwd=tcp:127.0.0.1:40000-:22,hostfwd=tcp:127.0.0.1:5555-:80,hostfwd=udp::53-:53"},
		{"only rule has another guest port",
			"-netdev user,id=n,hostfwd=tcp::8080-:8080",
			"-netdev user,id=n,hostfwd=tcp:127.0.0.1:5555-:8080"},
		{"two rules, none to guest 80: both move, ours added",
			"-netdev user,id=n,hostfwd=tcp::1-:1,hostfwd=tcp::2-:2",
			"-netdev user,id=n,hostfwd=tcp:127.0.0.1:40000-:1,hostfwd=tcp:127.0.0.1:40001-:2,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"user netdev without hostfwd gets one",
			"-netdev user,id=n -device virtio-net-device,netdev=n",
			"-netdev user,id=n,hostfwd=tcp:127.0.0.1:5555-:80 -device virtio-net-device,netdev=n"},
		{"bare nic user gets one",
			"-nic user",
			"-nic user,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"no network at all: netdev and device added",
			"-machine virt -kernel k",
			"-machine virt -kernel k -netdev user,id=jiege0,hostfwd=tcp:127.0.0.1:5555-:80 -device virtio-net-device,netdev=jiege0"},
		{"tap backend is not user networking",
			"-netdev tap,id=t,ifname=tap0",
			"-netdev tap,id=t,ifname=tap0 -netdev user,id=jiege0,hostfwd=tcp:127.0.0.1:5555-:80 -device virtio-net-device,netdev=jiege0"},
		{"escaped comma kept",
			"-netdev user,id=n,smb=/a,,b,hostfwd=tcp::8080-:80",
			"-netdev user,id=n,smb=/a,,b,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"second user netdev holds the rule",
			"-netdev user,id=a -netdev user,id=b,hostfwd=tcp::8080-:80",
			"-netdev user,id=a -netdev user,id=b,hostfwd=tcp:127.0.0.1:5555-:80"},
		{"version passes through", "--version", "--version"},
		{"machine help passes through", "-machine help", "-machine help"},
		{"device help passes through", "-device virtio-net-device,help", "-device virtio-net-device,help"},
		{"netdev without value left alone",
			"-kernel k -netdev",
			"-kernel k -netdev -netdev user,id=jiege0,hostfwd=tcp:127.0.0.1:5555-:80 -device virtio-net-device,netdev=jiege0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := 40000
			free := func() (int, error) { next++; return next - 1, nil }
			got, err := Rewrite(strings.Fields(c.in), 5555, 80, free)
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("\n got %s\nwant %s", g, c.want)
			}
		})
	}
}

func TestRewriteJSON(t *testing.T) {
	in := []string{"-netdev", `{"type":"user","id":"n","hostfwd":[{"str":"tcp::8080-:80"}]}`}
	got, err := Rewrite(in, 5555, 80, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hostfwd":[{"str":"tcp:127.0.0.1:5555-:80"}],"id":"n","type":"user"}`
	if got[1] != want {
		t.Errorf("got %s", got[1])
	}
	got, err = Rewrite([]string{"-netdev", `{"type":"user","id":"n"}`}, 5555, 80, nil)
	if err != nil || got[1] != `{"hostfwd":[{"str":"tcp:127.0.0.1:5555-:80"}],"id":"n","type":"user"}` {
		t.Errorf("added rule: %v %v", got, err)
	}
}

func TestRewriteErrors(t *testing.T) {
	for _, in := range []string{
		"-netdev user,id=n,hostfwd=tcp:8080:80",
		"-netdev user,id=n,hostfwd=sctp::1-:80",
		"-netdev user,id=n,hostfwd=tcp::x-:80",
		"-netdev user,id=n,hostfwd=tcp::1-:99999",
		`-netdev {"type":`,
	} {
		if _, err := Rewrite(strings.Fields(in), 5555, 80, nil); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	boom := errors.New("no free port")
	_, err := Rewrite(strings.Fields("-netdev user,id=n,hostfwd=tcp::2222-:22,hostfwd=tcp::8080-:80"), 5555, 80,
		func() (int, error) { return 0, boom })
	if !errors.Is(err, boom) {
		t.Errorf("free-port error lost: %v", err)
	}
}

func TestRewriteDoesNotModifyInput(t *testing.T) {
	in := []string{"-netdev", "user,id=n,hostfwd=tcp::8080-:80"}
	if _, err := Rewrite(in, 5555, 80, nil); err != nil {
		t.Fatal(err)
	}
	if in[1] != "user,id=n,hostfwd=tcp::8080-:80" {
		t.Errorf("input modified: %v", in)
	}
}

// An attempt forwarding another host port (5555) or none at all, with
// jiege's port 6123 and the guest's nginx on 80 or on 8080.
func TestRewriteOtherPortsAndNone(t *testing.T) {
	cases := []struct {
		in    string
		guest int
		want  string
	}{
		{"-netdev user,id=n,hostfwd=tcp::5555-:80", 80, "-netdev user,id=n,hostfwd=tcp:127.0.0.1:6123-:80"},
		{"-netdev user,id=n,hostfwd=tcp::5555-:8080,hostfwd=tcp::2222-:22", 8080,
			"-netdev user,id=n,hostfwd=tcp:127.0.0.1:6123-:8080,hostfwd=tcp:127.0.0.1:40000-:22"},
		{"-netdev user,id=n -device virtio-net-device,netdev=n", 8080,
			"-netdev user,id=n,hostfwd=tcp:127.0.0.1:6123-:8080 -device virtio-net-device,netdev=n"},
		{"-kernel k", 80, "-kernel k -netdev user,id=jiege0,hostfwd=tcp:127.0.0.1:6123-:80 -device virtio-net-device,netdev=jiege0"},
	}
	for _, c := range cases {
		got, err := Rewrite(strings.Fields(c.in), 6123, c.guest, func() (int, error) { return 40000, nil })
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%s (guest %d):\n got %s %v\nwant %s", c.in, c.guest, strings.Join(got, " "), err, c.want)
		}
		// The rewritten line forwards jiege's port, as a QEMU found
		// without the shim would be read.
		if addr, port, ok := ForwardedPort(got, c.guest); !ok || addr != "127.0.0.1" || port != 6123 {
			t.Errorf("%s: forwarded %s:%d %v", c.want, addr, port, ok)
		}
	}
	if addr, port, ok := ForwardedPort(strings.Fields("-netdev user,id=n,hostfwd=tcp::5555-:80"), 80); !ok || addr != "127.0.0.1" || port != 5555 {
		t.Errorf("any-address rule: %s:%d %v", addr, port, ok)
	}
	if _, _, ok := ForwardedPort(strings.Fields("-netdev user,id=n -kernel k"), 80); ok {
		t.Error("no rule: forwarded port found")
	}
}

func TestWithExtra(t *testing.T) {
	cases := []struct{ in, extra, want string }{
		{"-m 512M -kernel k", "-m 1G", "-m 1G -kernel k"},
		{"-kernel k", "-m 1G -smp 2", "-kernel k -m 1G -smp 2"},
		{"-device a -kernel k", "-device b -nographic", "-device a -kernel k -device b -nographic"},
		{"--m 512M", "-m 2G", "--m 2G"},
	}
	for _, c := range cases {
		if got := strings.Join(WithExtra(strings.Fields(c.in), strings.Fields(c.extra)), " "); got != c.want {
			t.Errorf("%s + %s: %s, want %s", c.in, c.extra, got, c.want)
		}
	}
}

func TestWithCapture(t *testing.T) {
	got, ok := WithCapture(strings.Fields("-netdev user,id=a -netdev user,id=net0,hostfwd=tcp:127.0.0.1:1-:80"), 80, "/t/x,y.pcap")
	if want := "-netdev user,id=a -netdev user,id=net0,hostfwd=tcp:127.0.0.1:1-:80 -object filter-dump,id=jiegedump,netdev=net0,maxlen=96,file=/t/x,,y.pcap"; !ok || strings.Join(got, " ") != want {
		t.Errorf("got %s %v", strings.Join(got, " "), ok)
	}
	for _, in := range []string{"-nic user,hostfwd=tcp::1-:80", "-net nic -net user,hostfwd=tcp::1-:80", "-netdev user,hostfwd=tcp::1-:80", "-kernel k"} {
		if got, ok := WithCapture(strings.Fields(in), 80, "/f"); ok || strings.Join(got, " ") != in {
			t.Errorf("%s: %v %v, want unchanged", in, got, ok)
		}
	}
}
