// Command osroot works inside a directory through os.Root (Go 1.24+),
// which resolves every path beneath the root with openat2's
// RESOLVE_BENEATH and related flags, and prints what each operation
// gives: escapes by "..", by an absolute symlink and by a relative one
// must fail; paths inside must work.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

func show(name string, err error) {
	var errno syscall.Errno
	switch {
	case err == nil:
		fmt.Printf("%s: ok\n", name)
	case errors.As(err, &errno):
		fmt.Printf("%s: %s\n", name, errno.Error())
	case errors.Is(err, fs.ErrNotExist):
		fmt.Printf("%s: not exist\n", name)
	default:
		// os.Root's own refusal ("path escapes from parent").
		fmt.Printf("%s: refused\n", name)
	}
}

func main() {
	must := func(err error) {
		if err != nil {
			fmt.Println("setup:", err)
			os.Exit(1)
		}
	}
	must(os.MkdirAll("rootdir/sub/deeper", 0o755))
	must(os.WriteFile("rootdir/sub/file", []byte("inside\n"), 0o644))
	must(os.WriteFile("outside", []byte("outside\n"), 0o644))
	must(os.Symlink("/etc", "rootdir/abs"))
	must(os.Symlink("../../outside", "rootdir/sub/rel"))
	must(os.Symlink("file", "rootdir/sub/ok"))

	r, err := os.OpenRoot("rootdir")
	must(err)
	defer r.Close()

	f, err := r.Open("sub/file")
	show("open sub/file", err)
	if err == nil {
		b := make([]byte, 16)
		n, _ := f.Read(b)
		fmt.Printf("read: %q\n", b[:n])
		f.Close()
	}
	_, err = r.Open("sub/ok")
	show("open through a link inside", err)
	_, err = r.Open("../outside")
	show("open ../outside", err)
	_, err = r.Open("sub/rel")
	show("open through a relative link out", err)
	_, err = r.Open("abs/hostname")
	show("open through an absolute link", err)
	_, err = r.Open("sub/../sub/file")
	show("open sub/../sub/file", err)
	_, err = r.Open("sub/missing")
	show("open sub/missing", err)

	show("mkdir sub/new", r.Mkdir("sub/new", 0o755))
	show("mkdir ../escape", r.Mkdir("../escape", 0o755))
	fi, err := r.Stat("sub/deeper")
	show("stat sub/deeper", err)
	if err == nil {
		fmt.Println("is dir:", fi.IsDir())
	}
	fi, err = r.Lstat("sub/rel")
	show("lstat sub/rel", err)
	if err == nil {
		fmt.Println("is link:", fi.Mode()&fs.ModeSymlink != 0)
	}
	w, err := r.Create("sub/created")
	show("create sub/created", err)
	if err == nil {
		w.WriteString("new\n")
		w.Close()
	}
	show("remove sub/created", r.Remove("sub/created"))
	show("remove ../outside", r.Remove("../outside"))
	sub, err := r.OpenRoot("sub")
	show("open root sub", err)
	if err == nil {
		_, err = sub.Open("../sub/file")
		show("sub: open ../sub/file", err)
		_, err = sub.Open("deeper/../file")
		show("sub: open deeper/../file", err)
		sub.Close()
	}
	_, err = os.Stat("escape")
	show("escape made outside", err)
}
