package boot

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/drivers/virtio"
	"github.com/jiege-go/jiege/kernel/rvasm"
	"github.com/jiege-go/jiege/mm"
)

// Selftest runs the boot-time checks of the kernel's foundation and prints
// one line per check: entropy is the virtio-rng device, if any, and trace
// prints the test programs' system calls. It reports whether every check
// passed.
func Selftest(heapLimit int64, entropy *virtio.RNG, trace bool) bool {
	checks := []struct {
		name string
		run  func() (string, error)
	}{
		{"harts", checkHarts},
		{"goroutines", checkGoroutines},
		{"timers", checkTimers},
		{"gc", func() (string, error) { return checkGC(heapLimit) }},
		{"maps", checkMaps},
		{"wallclock", checkWallClock},
		{"usermode", func() (string, error) { return checkUserMode(trace) }},
	}
	if entropy != nil {
		checks = append(checks, struct {
			name string
			run  func() (string, error)
		}{"entropy", func() (string, error) { return checkEntropy(entropy) }})
	}
	failed := 0
	for _, c := range checks {
		start := time.Now()
		detail, err := c.run()
		if err != nil {
			failed++
			fmt.Printf("selftest: %s: FAIL: %v\n", c.name, err)
			continue
		}
		fmt.Printf("selftest: %s: ok (%s; %d ms)\n", c.name, detail, time.Since(start).Milliseconds())
	}
	inUse, _ := arch.MemoryStats()
	fmt.Printf("selftest: resident %d KiB after the checks\n", inUse>>10)
	if failed > 0 {
		fmt.Printf("selftest: FAILED: %d of %d checks\n", failed, len(checks))
		return false
	}
	fmt.Printf("selftest: PASSED: all %d checks\n", len(checks))
	return true
}

// checkHarts checks that the runtime sees every hart (GOMAXPROCS) and
// that goroutines run on each: busy goroutines, one per hart, record the
// harts they find themselves on until all have been seen.
func checkHarts() (string, error) {
	n := arch.Harts()
	if p := runtime.GOMAXPROCS(0); p != n {
		return "", fmt.Errorf("GOMAXPROCS is %d with %d harts", p, n)
	}
	var seen [64]atomic.Bool
	var count atomic.Int32
	deadline := time.Now().Add(20 * time.Second)
	done := make(chan struct{})
	for range n {
		go func() {
			for count.Load() < int32(n) && time.Now().Before(deadline) {
				if id := arch.CurrentHart(); !seen[id].Swap(true) {
					count.Add(1)
				}
			}
			done <- struct{}{}
		}()
	}
	for range n {
		<-done
	}
	if c := count.Load(); c != int32(n) {
		return "", fmt.Errorf("goroutines ran on %d of %d harts", c, n)
	}
	return fmt.Sprintf("%d harts, GOMAXPROCS %d, goroutines ran on every hart", n, n), nil
}

// checkGoroutines sends tokens down a chain of 10,000 goroutines; each adds one.
func checkGoroutines() (string, error) {
	const n, tokens = 10_000, 20
	first := make(chan int)
	in := first
	for i := 0; i < n; i++ {
		out := make(chan int)
		go func(in <-chan int, out chan<- int) {
			for v := range in {
				out <- v + 1
			}
			close(out)
		}(in, out)
		in = out
	}
	go func() {
		for i := 0; i < tokens; i++ {
			first <- i * 1_000_000
		}
		close(first)
	}()
	got := 0
	for v := range in {
		if want := got*1_000_000 + n; v != want {
			return "", fmt.Errorf("token %d arrived as %d, want %d", got, v, want)
		}
		got++
	}
	if got != tokens {
		return "", fmt.Errorf("%d of %d tokens arrived", got, tokens)
	}
	return fmt.Sprintf("%d goroutines, %d tokens", n, tokens), nil
}

// checkTimers checks that sleepers never wake early or much later than due,
// and wake in deadline order; that time.After fires in order; and that a
// sleep lasts at least its duration. Timers that expire in the same
// scheduler pass are readied last-first (Go's runnext), so when the host
// stalls the guest past two deadlines their sleepers may run in either
// order: an inversion is accepted only when the earlier sleeper was already
// overdue by the later one's deadline, and it is reported.
func checkTimers() (string, error) {
	const maxLate = time.Second
	delays := []int{700, 100, 500, 300, 900, 200, 600, 400, 800}
	type wakeup struct {
		delay int
		late  time.Duration // wake time minus deadline
	}
	order := make(chan wakeup, len(delays))
	start := time.Now()
	for _, d := range delays {
		go func(d int) {
			time.Sleep(time.Duration(d) * time.Millisecond)
			order <- wakeup{d, time.Since(start) - time.Duration(d)*time.Millisecond}
		}(d)
	}
	var woke []wakeup
	for range delays {
		w := <-order
		if w.late < 0 || w.late > maxLate {
			return "", fmt.Errorf("Sleep(%dms) woke %v after its deadline", w.delay, w.late)
		}
		woke = append(woke, w)
	}
	stalls := 0
	for i, a := range woke {
		for _, b := range woke[i+1:] {
			if b.delay >= a.delay {
				continue
			}
			if b.late < time.Duration(a.delay-b.delay)*time.Millisecond {
				return "", fmt.Errorf("Sleep(%dms) woke before Sleep(%dms), which was not yet overdue then", a.delay, b.delay)
			}
			stalls++
		}
	}
	late, early := time.After(300*time.Millisecond), time.After(100*time.Millisecond)
	select {
	case <-late:
		return "", fmt.Errorf("time.After(300ms) fired before time.After(100ms)")
	case <-early:
	}
	<-late
	start = time.Now()
	time.Sleep(100 * time.Millisecond)
	if el := time.Since(start); el < 100*time.Millisecond || el > 100*time.Millisecond+maxLate {
		return "", fmt.Errorf("Sleep(100ms) took %v", el)
	}
	return fmt.Sprintf("%d sleepers in deadline order (%d pairs expired together in a host stall), none early or >%v late; After ordered; Sleep(100ms) ok",
		len(delays), stalls, maxLate), nil
}

// checkGC allocates eight times the Go heap's soft limit in garbage while
// keeping a small live set, and checks that memory was recycled.
func checkGC(heapLimit int64) (string, error) {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	live := make([][]byte, 64)
	total := int64(0)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; total < 8*heapLimit; i++ {
		b := make([]byte, 4<<10+rng.IntN(256<<10))
		b[0], b[len(b)-1] = byte(i), byte(i)
		live[i%len(live)] = b
		total += int64(len(b))
	}
	for i, b := range live {
		if b[0] != b[len(b)-1] {
			return "", fmt.Errorf("live buffer %d corrupted", i)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	inUse, ram := arch.MemoryStats()
	// Resident memory staying bounded is the proof that garbage was
	// reclaimed; the cycle count only shows the collector ran at all.
	if after.NumGC-before.NumGC < 2 {
		return "", fmt.Errorf("only %d GC cycles for %d MiB of garbage", after.NumGC-before.NumGC, total>>20)
	}
	if inUse > ram/2 {
		return "", fmt.Errorf("%d MiB resident after the garbage", inUse>>20)
	}
	return fmt.Sprintf("%d MiB garbage = %.1fx the %d MiB limit, %d GCs, %d MiB resident",
		total>>20, float64(total)/float64(heapLimit), heapLimit>>20, after.NumGC-before.NumGC, inUse>>20), nil
}

// checkMaps runs a map and slice workload with known answers.
func checkMaps() (string, error) {
	const n = 200_000
	m := make(map[int]int)
	for i := 0; i < n; i++ {
		m[i*7919%n] = i
	}
	sum := 0
	for k, v := range m {
		sum += k - v
	}
	if len(m) != n || sum != 0 {
		// k = i*7919 mod n ranges over 0..n-1 once (7919 is prime, coprime with n),
		// so the sums of keys and values are equal.
		return "", fmt.Errorf("map has %d entries, key-value sum %d", len(m), sum)
	}
	s := make([]uint64, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range s {
		s[i] = rng.Uint64()
	}
	slices.Sort(s)
	if !slices.IsSorted(s) {
		return "", fmt.Errorf("slice not sorted")
	}
	var sb strings.Builder
	for i := 0; i < 10_000; i++ {
		fmt.Fprintf(&sb, "%d,", i)
	}
	if got := strings.Count(sb.String(), ","); got != 10_000 {
		return "", fmt.Errorf("builder has %d fields", got)
	}
	return fmt.Sprintf("%d-entry map, %d sorted, 10000 formatted", n, n), nil
}

// checkWallClock prints the wall-clock time for the host to compare with.
func checkWallClock() (string, error) {
	now := time.Now()
	fmt.Printf("selftest: wallclock %d\n", now.Unix())
	if now.Year() < 2025 {
		return "", fmt.Errorf("wall clock says %v", now)
	}
	return now.UTC().Format(time.RFC3339), nil
}

// userSpace is a tiny user address space for checkUserMode.
type userSpace struct {
	root  uintptr
	pages []uintptr
}

const (
	userCode = 0x10000
	userData = 0x11000
)

func newUserSpace(code []uint32, data string) (*userSpace, error) {
	u := &userSpace{root: arch.NewUserRoot()}
	cp, dp := arch.AllocFrame(), arch.AllocFrame()
	if u.root == 0 || cp == 0 || dp == 0 {
		return nil, fmt.Errorf("out of frames")
	}
	u.pages = []uintptr{cp, dp}
	copy(unsafe.Slice((*uint32)(mm.Ptr(cp)), len(code)), code)
	copy(unsafe.Slice((*byte)(mm.Ptr(dp)), len(data)), data)
	if !arch.MapUserPage(u.root, userCode, cp, mm.PTERead|mm.PTEExec) ||
		!arch.MapUserPage(u.root, userData, dp, mm.PTERead) {
		return nil, fmt.Errorf("cannot map user pages")
	}
	return u, nil
}

func (u *userSpace) free() { arch.FreePageTable(u.root) }

// read copies user memory by walking the user page table.
func (u *userSpace) read(va, n uintptr) ([]byte, bool) {
	out := make([]byte, 0, n)
	for n > 0 {
		pa, perm, ok := mm.Translate(u.root, va)
		if !ok || perm&mm.PTEUser == 0 {
			return nil, false
		}
		chunk := min(n, mm.PageSize-va%mm.PageSize)
		out = append(out, unsafe.Slice((*byte)(mm.Ptr(pa)), chunk)...)
		va, n = va+chunk, n-chunk
	}
	return out, true
}

// run executes the program until it exits or faults, serving write and exit
// as system calls (printing them when trace is set) and yielding to other
// goroutines on every interrupt. stop ends the run at the next interrupt
// when it returns true.
func (u *userSpace) run(f *arch.Frame, out *strings.Builder, stop func(interrupts int) bool, trace bool) (exit int, cause uint64, interrupts int) {
	f.PC = userCode
	f.Satp = mm.SatpSv39(u.root)
	for {
		cause := arch.RunUser(f)
		switch {
		case arch.IsInterrupt(cause):
			interrupts++
			if stop != nil && stop(interrupts) {
				return -1, cause, interrupts
			}
			runtime.Gosched()
		case cause == arch.CauseEcallU:
			a := &f.X
			nr := a[arch.RegA7]
			switch nr {
			case 64: // write
				b, ok := u.read(uintptr(a[arch.RegA1]), uintptr(a[arch.RegA2]))
				ret := int64(-14) // EFAULT
				if ok {
					out.Write(b)
					ret = int64(len(b))
				}
				if trace {
					fmt.Printf("[user] write(%d, %#x, %d) = %d\n", a[arch.RegA0], a[arch.RegA1], a[arch.RegA2], ret)
				}
				a[arch.RegA0] = uint64(ret)
			case 93: // exit
				if trace {
					fmt.Printf("[user] exit(%d)\n", a[arch.RegA0])
				}
				return int(a[arch.RegA0]), cause, interrupts
			default:
				a[arch.RegA0] = uint64(0xffffffffffffffda) // -ENOSYS
			}
			f.PC += 4
		default:
			return -1, cause, interrupts
		}
	}
}

// checkUserMode enters U-mode three times: a program that writes and exits,
// one that spins until timer interrupts have returned to its goroutine
// while another goroutine keeps running, and one that loads from a kernel
// address and must come back as a page fault.
func checkUserMode(trace bool) (string, error) {
	f := arch.NewUserFrame()
	if f == nil {
		return "", fmt.Errorf("no frame for the user context")
	}
	defer arch.FreeUserFrame(f)

	const msg = "hello from U-mode\n"
	u, err := newUserSpace([]uint32{
		rvasm.ADDI(rvasm.A7, rvasm.Zero, 64), rvasm.ADDI(rvasm.A0, rvasm.Zero, 1), rvasm.LUI(rvasm.A1, userData>>12),
		rvasm.ADDI(rvasm.A2, rvasm.Zero, int32(len(msg))), rvasm.ECALL(),
		rvasm.ADDI(rvasm.A7, rvasm.Zero, 93), rvasm.ADDI(rvasm.A0, rvasm.Zero, 7), rvasm.ECALL(),
	}, msg)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	code, cause, _ := u.run(f, &out, nil, trace)
	u.free()
	if code != 7 || out.String() != msg {
		return "", fmt.Errorf("write+exit program: exit %d (cause %d), wrote %q", code, cause, out.String())
	}

	if u, err = newUserSpace([]uint32{rvasm.J0()}, ""); err != nil {
		return "", err
	}
	var progress atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				progress.Add(1)
				runtime.Gosched()
			}
		}
	}()
	const ticks = 20
	_, cause, interrupts := u.run(f, &out, func(n int) bool { return n >= ticks }, trace)
	close(done)
	u.free()
	if interrupts < ticks || progress.Load() == 0 {
		return "", fmt.Errorf("spin program: %d interrupts, other goroutine progressed %d times", interrupts, progress.Load())
	}

	// The kernel's image, mapped in every address space, without the U bit.
	kernelAddr := uint64(arch.Boot().KernelVA)
	if u, err = newUserSpace([]uint32{rvasm.LD(rvasm.A0, rvasm.A1, 0), rvasm.J0()}, ""); err != nil {
		return "", err
	}
	f.X[arch.RegA1] = kernelAddr
	_, cause, _ = u.run(f, &out, nil, trace)
	u.free()
	if cause != arch.CauseLoadPageFault || f.Tval != kernelAddr || f.PC != userCode {
		return "", fmt.Errorf("kernel-address load: cause %d tval %#x pc %#x, want page fault at %#x", cause, f.Tval, f.PC, kernelAddr)
	}
	return fmt.Sprintf("write+exit(7); %d timer interrupts in U-mode while another goroutine ran %d times; load of %#x faulted",
		interrupts, progress.Load(), kernelAddr), nil
}

// checkEntropy reads more than one page from virtio-rng, which takes
// several requests and interrupts, and checks the bytes look random.
func checkEntropy(entropy *virtio.RNG) (string, error) {
	a, b := make([]byte, 6000), make([]byte, 6000)
	if _, err := entropy.Read(a); err != nil {
		return "", err
	}
	if _, err := entropy.Read(b); err != nil {
		return "", err
	}
	if string(a) == string(b) {
		return "", fmt.Errorf("two reads returned the same bytes")
	}
	var seen [256]bool
	distinct := 0
	for _, c := range a {
		if !seen[c] {
			seen[c] = true
			distinct++
		}
	}
	if distinct < 200 {
		return "", fmt.Errorf("only %d distinct byte values in 6000 bytes", distinct)
	}
	return fmt.Sprintf("2 x 6000 bytes from virtio-rng by interrupt, %d distinct byte values", distinct), nil
}
