// Command execbusy calls syscall.Exec while eight goroutines keep threads
// busy computing: execve must end every other thread of the process
// (Linux's de_thread) and start the new image, which here is the program
// itself with an argument.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "after" {
		fmt.Println("after exec: args", len(os.Args), "pid same:", os.Getenv("EXECBUSY_PID") == fmt.Sprint(os.Getpid()))
		return
	}
	runtime.GOMAXPROCS(8)
	var spins atomic.Int64
	for range 8 {
		go func() {
			runtime.LockOSThread()
			for {
				spins.Add(1)
			}
		}()
	}
	for spins.Load() < 1000 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("before exec: busy threads running")
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	env := append(os.Environ(), fmt.Sprintf("EXECBUSY_PID=%d", os.Getpid()))
	err = syscall.Exec(exe, []string{exe, "after"}, env)
	fmt.Println("exec failed:", err)
	os.Exit(1)
}
