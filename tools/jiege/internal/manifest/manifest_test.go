package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const good = `{
  "schema": 1,
  "attempts": [
    {"name": "ref", "kernel": "ours"},
    {"name": "linux", "kernel": "linux"},
    {"name": "agent-a", "dir": "a", "build": "make -j2 build", "run": "make run PORT=8080",
     "guest_port": 8080, "qemu_args": ["-m", "1G"], "metadata": {"model": "model-x", "duration": "2h10m", "cost": 12.5}},
    {"name": "img", "kernel": "kernels/Image"}
  ],
  "bench": {"duration": "5s", "runs": 3}
}`

func TestParseGood(t *testing.T) {
	m, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Attempts) != 4 || m.Bench.Runs != 3 || m.Bench.LoadDuration() != 5*time.Second {
		t.Fatalf("%+v", m)
	}
	a := m.Attempts[2]
	if a.Dir != "a" || a.Build != "make -j2 build" || a.GuestPort != 8080 || strings.Join(a.QEMUArgs, " ") != "-m 1G" {
		t.Errorf("%+v", a)
	}
	meta := a.Metadata.Meta()
	if meta.Model != "model-x" || meta.Duration != "2h10m" || meta.Cost != "12.5" {
		t.Errorf("metadata %+v", meta)
	}
	if (*Bench)(nil).LoadDuration() != 0 {
		t.Error("nil bench has a duration")
	}
}

func TestParseBad(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string // substrings of the error
	}{
		{"empty", ``, []string{"empty file"}},
		{"syntax", "{\n  \"attempts\": [\n    {\"name\": \"a\",, }\n]}", []string{"line 3, column", "invalid character"}},
		{"trailing data", `{"attempts":[{"name":"a","kernel":"ours"}]} {}`, []string{"data after"}},
		{"unknown field", `{"attempts":[{"name":"a","dir":"x","biuld":"make"}]}`, []string{`unknown field "biuld"`}},
		{"wrong type", `{"attempts":[{"name":"a","kernel":"ours","guest_port":"80"}]}`, []string{"line 1", "guest_port"}},
		{"bad metadata", `{"attempts":[{"name":"a","kernel":"ours","metadata":{"model":["x"]}}]}`, []string{"string or a number"}},
		{"no attempts", `{"attempts":[]}`, []string{"no attempts"}},
		{"qemu_args of a kernel", `{"attempts":[{"name":"a","kernel":"ours","qemu_args":["-m","1G"]}]}`, []string{`"qemu_args" apply only to a "dir" attempt`}},
		{"schema", `{"schema":2,"attempts":[{"name":"a","kernel":"ours"}]}`, []string{"schema 2 is not supported"}},
		{"all problems at once", `{"attempts":[
			{"kernel":"ours"},
			{"name":"a b","kernel":"ours"},
			{"name":"x","kernel":"ours"},{"name":"x","kernel":"linux"},
			{"name":"neither"},
			{"name":"both","dir":"d","kernel":"ours"},
			{"name":"cmds","kernel":"ours","build":"make"},
			{"name":"port","kernel":"ours","guest_port":70000}],
			"bench":{"duration":"soon","runs":99}}`,
			[]string{"attempts[0]: no name", `attempts[1] ("a b"): name must be`, `attempts[3] ("x"): name used twice`,
				`attempts[4] ("neither"): give "dir"`, `"dir" and "kernel" are both set`, `apply only to a "dir" attempt`,
				"guest_port 70000", `bench.duration "soon"`, "bench.runs 99"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadResolvesAndChecksPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "kernels"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernels", "Image"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.json")
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Attempts[2].Dir != filepath.Join(dir, "a") || m.Attempts[3].Kernel != filepath.Join(dir, "kernels", "Image") || m.Attempts[0].Kernel != "ours" {
		t.Errorf("paths not resolved: %+v", m.Attempts)
	}
	if m.Path != path {
		t.Errorf("path %q", m.Path)
	}

	os.RemoveAll(filepath.Join(dir, "a"))
	os.Remove(filepath.Join(dir, "kernels", "Image"))
	_, err = Load(path)
	if err == nil || !strings.Contains(err.Error(), `attempt "agent-a": directory`) || !strings.Contains(err.Error(), `attempt "img": kernel file`) {
		t.Errorf("missing paths: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "nope.json")); err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing manifest: %v", err)
	}
}
