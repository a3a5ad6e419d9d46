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
