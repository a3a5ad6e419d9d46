package fs

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestResolveJoin(t *testing.T) {
	inRoot := &Resolve{Root: "/r"}
	beneath := &Resolve{Root: "/r", Beneath: true}
	for _, c := range []struct {
		r       *Resolve
		dir, p  string
		want    string
		wantErr error
	}{
		{nil, "/a", "../b", "/b", nil},
		{nil, "/a", "/x/../y", "/y", nil},
		{inRoot, "/r/a", "../../../b", "/r/b", nil},
		{inRoot, "/r", "/etc", "/r/etc", nil},
		{inRoot, "/r", "/", "/r", nil},
		{inRoot, "/rx", "../b", "/b", nil}, // outside the root: not confined
		{inRoot, "/elsewhere", "../../b", "/b", nil},
		{beneath, "/r", "a/../b", "/r/b", nil},
		{beneath, "/r", "../r/b", "", unix.EXDEV},
		{beneath, "/r/a", "..", "/r", nil},
		{beneath, "/r", "/etc", "", unix.EXDEV},
		{&Resolve{Beneath: true, Root: "/"}, "/", "..", "", unix.EXDEV},
	} {
		got, err := c.r.Join(c.dir, c.p)
		if got != c.want || err != c.wantErr {
			t.Errorf("%+v.Join(%q, %q) = %q, %v; want %q, %v", c.r, c.dir, c.p, got, err, c.want, c.wantErr)
		}
	}
}
