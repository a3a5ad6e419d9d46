// Command allthreads sets the effective group id on every thread with
// syscall.AllThreadsSyscall (the runtime signals each thread to make the
// call itself; Linux keeps credentials per thread), then reads it back on
// threads that lived through the call.
package main

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
)

func main() {
	// Start threads that stay alive across the call.
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	gids := make([]uintptr, 4)
	for i := range 4 {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			ready.Done()
			<-release
			g, _, _ := syscall.RawSyscall(syscall.SYS_GETEGID, 0, 0, 0)
			gids[i] = g
		}()
	}
	ready.Wait()
	_, _, errno := syscall.AllThreadsSyscall(syscall.SYS_SETRESGID, 0, 4242, 0)
	fmt.Println("AllThreadsSyscall setresgid:", errno == 0, errno)
	close(release)
	done.Wait()
	for i, g := range gids {
		fmt.Printf("thread %d egid: %d\n", i, g)
	}
	g, _, _ := syscall.RawSyscall(syscall.SYS_GETEGID, 0, 0, 0)
	fmt.Println("main egid:", g)
}
