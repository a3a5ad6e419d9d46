// Command deeppath descends by relative chdir through directories whose
// whole path grows past PATH_MAX (4096 bytes): only the path a call is
// given is bounded, so relative names keep working at any depth, while
// the absolute path no longer fits a getcwd buffer.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if err == nil {
		return "ok"
	}
	return "error"
}

func main() {
	name := strings.Repeat("d", 200)
	depth := 0
	for ; depth < 30; depth++ {
		if err := os.Mkdir(name, 0o755); err != nil {
			fmt.Printf("mkdir at depth %d: %s\n", depth, errText(err))
			break
		}
		if err := syscall.Chdir(name); err != nil {
			fmt.Printf("chdir at depth %d: %s\n", depth, errText(err))
			break
		}
	}
	fmt.Println("depth reached:", depth)
	err := os.WriteFile("file", []byte("deep\n"), 0o644)
	fmt.Println("create file:", errText(err))
	fi, err := os.Stat("file")
	fmt.Println("stat file:", errText(err))
	if err == nil {
		fmt.Println("size:", fi.Size())
	}
	b, err := os.ReadFile("file")
	fmt.Printf("read file: %s %q\n", errText(err), b)
	_, err = os.Stat("../" + name + "/file")
	fmt.Println("stat through ..:", errText(err))
	buf := make([]byte, 4096)
	_, err = syscall.Getcwd(buf)
	fmt.Println("getcwd with 4096 bytes:", errText(err))
	fmt.Println("remove file:", errText(os.Remove("file")))
	// Climb back, removing each level.
	for i := 0; i < depth; i++ {
		if err := syscall.Chdir(".."); err != nil {
			fmt.Println("chdir ..:", errText(err))
			return
		}
		if err := syscall.Rmdir(name); err != nil {
			fmt.Println("rmdir:", errText(err))
			return
		}
	}
	fmt.Println("climbed back")
}
