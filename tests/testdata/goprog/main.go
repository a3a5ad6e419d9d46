// Command goprog is a static Go program run as /init on the kernel and on
// Linux (tests/goprog_test.go): goroutines over several threads, timers,
// channels, a mutex, a signal through os/signal, itself run again through
// os/exec (pipes, vfork, execve, wait), and a panic recovered; it prints only what Linux
// defines the same on every run.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "child" {
		fmt.Printf("child: %q, stdin %q\n", os.Args[2:], readAll(os.Stdin))
		os.Exit(7)
	}
	runtime.GOMAXPROCS(4)
	fmt.Println("gomaxprocs:", runtime.GOMAXPROCS(0))
	fmt.Println("pid is positive:", os.Getpid() > 0)

	// Channel ping-pong between two goroutines.
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	v := 0
	for i := 0; i < 10000; i++ {
		ping <- v
		v = <-pong
	}
	close(ping)
	fmt.Println("ping-pong:", v)

	// Goroutines that keep threads busy, and a mutex-guarded counter.
	var mu sync.Mutex
	var wg sync.WaitGroup
	counter := 0
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10000; i++ {
				mu.Lock()
				counter++
				mu.Unlock()
				if i%1000 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("counter:", counter)

	// Goroutines locked to their threads, all blocked at once: each has an
	// OS thread of its own.
	runtime.LockOSThread()
	tids := make(chan int)
	release := make(chan struct{})
	for g := 0; g < 3; g++ {
		go func() {
			runtime.LockOSThread()
			tids <- syscall.Gettid()
			<-release
		}()
	}
	seen := map[int]bool{syscall.Gettid(): true}
	for g := 0; g < 3; g++ {
		seen[<-tids] = true
	}
	close(release)
	runtime.UnlockOSThread()
	fmt.Println("distinct threads:", len(seen), "pid shared:", syscall.Getpid() == os.Getpid())

	// Sleeps and timers, in order.
	start := time.Now()
	time.Sleep(30 * time.Millisecond)
	fmt.Println("slept at least 30ms:", time.Since(start) >= 30*time.Millisecond)
	// Timers set out of order each fire, none before its time. (Their
	// order is not checked: under load, several may be due at once.)
	type firing struct {
		ms     int
		onTime bool
	}
	fired := make(chan firing, 3)
	set := time.Now()
	for _, ms := range []int{60, 20, 40} {
		time.AfterFunc(time.Duration(ms)*time.Millisecond, func() {
			fired <- firing{ms, time.Since(set) >= time.Duration(ms)*time.Millisecond}
		})
	}
	total, onTime := 0, true
	for range 3 {
		f := <-fired
		total += f.ms
		onTime = onTime && f.onTime
	}
	fmt.Println("timers fired, ms:", total, "none early:", onTime)
	ticker := time.NewTicker(10 * time.Millisecond)
	ticks := 0
	for range ticker.C {
		if ticks++; ticks == 5 {
			break
		}
	}
	ticker.Stop()
	fmt.Println("ticks:", ticks)
	select {
	case <-time.After(20 * time.Millisecond):
		fmt.Println("select timeout: fired")
	case <-make(chan int):
	}

	// os/signal: a signal sent to the process arrives on the channel.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	select {
	case s := <-sigs:
		fmt.Println("signal:", s)
	case <-time.After(10 * time.Second):
		fmt.Println("signal: none")
	}
	signal.Stop(sigs)

	// os/exec: this program again, with arguments, stdin and stdout
	// through pipes, and its exit status.
	self, err := os.Executable()
	if err != nil {
		fmt.Println("executable:", err)
	}
	cmd := exec.Command(self, "child", "a b", "c")
	cmd.Stdin = strings.NewReader("to the child")
	out, err := cmd.Output()
	fmt.Printf("exec: %q, %v\n", out, err)

	// A recovered panic, and a garbage collection with goroutines alive.
	func() {
		defer func() { fmt.Println("recovered:", recover()) }()
		var m map[string]int
		m["x"] = 1
	}()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("gc ran:", ms.NumGC > 0)
	// Goroutines spinning on other threads: this one still progresses, and
	// exit ends them all.
	var stop atomic.Bool
	var spins atomic.Int64
	for g := 0; g < 3; g++ {
		go func() {
			for !stop.Load() {
				spins.Add(1)
			}
		}()
	}

	time.Sleep(20 * time.Millisecond)
	fmt.Println("spinners ran:", spins.Load() > 0)
	os.Exit(3)
}

func readAll(f *os.File) string {
	b, _ := io.ReadAll(f)
	return string(b)
}
