package boot

import (
	"crypto/fips140"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"time"
	"unsafe"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/drivers/goldfish"
	"github.com/jiege-go/jiege/drivers/uart"
	"github.com/jiege-go/jiege/drivers/virtio"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/fs/procfs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/loader"
	"github.com/jiege-go/jiege/mm"
	jnet "github.com/jiege-go/jiege/net"
)

// Version is the kernel's release.
const Version = "0.1.0"

// goHeapShare is the fraction of RAM the kernel's Go heap aims to stay
// within (a soft limit); the rest is for user memory.
const goHeapShare = 4

// gcPercent is the kernel's GOGC (see Main).
const gcPercent = 1000

// SyscallLayer is the system call layer (package syscall), passed in by
// the kernel's main package: it depends on this package, not the reverse.
// A function, not an interface: a task calls Dispatch at every system
// call, and under QEMU each extra call level costs a lookup.
type SyscallLayer struct {
	Dispatch func(t *kernel.Task)
}

// Main is the kernel's main.main: the boot sequence after the runtime is up.
func Main(syscalls SyscallLayer) {
	mainTicks := arch.Ticks()
	b := arch.Boot()
	dtSize := int(be32(b.DTB + 4))
	m, err := ParseDeviceTree(unsafe.Slice((*byte)(mm.Ptr(b.DTB)), dtSize))
	if err != nil {
		fmt.Printf("kernel: %v\n", err)
		arch.PowerOff(3)
	}
	if p := m.DevicesOf("plic"); len(p) > 0 {
		arch.SetPLIC(uintptr(p[0].Base), m.PLICContexts)
	}
	if r := m.DevicesOf("rtc"); len(r) > 0 {
		arch.SetWallClock(goldfish.ReadTime(uintptr(r[0].Base)))
	}
	// The one kernel this machine runs; its clock starts now.
	k := kernel.New(kernel.Config{
		UserMemory:  arch.UserMemory,
		NewRegs:     arch.NewUserFrame,
		StartTask:   func(t *kernel.Task) { go t.Run(syscalls.Dispatch) },
		CPUs:        arch.Harts(),
		MemoryStats: arch.MemoryStats,
		CurrentCPU:  arch.CurrentHart,
		KernelLog: func(from uint64) ([]byte, uint64) {
			buf := new([arch.KernelLogSize]byte)
			n, start := arch.KernelLog(buf, from)
			return buf[:n], start
		},
		KernelLogSize: arch.KernelLogSize,
		Reset: func(restart bool) {
			if restart {
				arch.Reboot()
			}
			arch.PowerOff(0)
		},
	})
	// The kernel's runtime reads the monotonic clock as the time CSR in ns
	// (nanotime), so CLOCK_MONOTONIC (Uptime) is that minus k.BootNano.
	k.VDSO().SetClock(arch.Boot().Timebase, arch.WallClockOffset(), -k.BootNano())
	heapLimit := int64(m.RAMSize / goHeapShare)
	debug.SetMemoryLimit(heapLimit)
	// Under load most of the heap is live (sockets, TIME-WAIT endpoints,
	// cached files) and each collection marks all of it: collecting at 5x
	// the live heap rather than 2x, the soft limit still holding, cut the
	// instructions per fresh connection to nginx by 4-7%.
	debug.SetGCPercent(gcPercent)

	firmware := "its own M-mode code"
	if b.SBI {
		firmware = "SBI firmware"
	}
	fmt.Printf("Jiege-Go %s (%s) riscv64, S-mode, %d of %d harts running, under %s\n", Version, runtime.Version(), arch.Harts(), m.Harts, firmware)
	fmt.Printf("machine: %s, timebase %d Hz\n", m.Model, m.Timebase)
	fmt.Printf("memory: %#x-%#x (%d MiB)\n", m.RAMBase, m.RAMBase+m.RAMSize, m.RAMSize>>20)
	imageSize := b.KernelEnd - b.KernelStart
	fmt.Printf("  %#x-%#x kernel image (%d KiB)\n", b.KernelStart, b.KernelEnd, imageSize>>10)
	// gVisor's netstack links crypto, whose FIPS 140-3 entropy source
	// reserves a 32 MiB scratch buffer in BSS, only ever touched in FIPS mode.
	if !fips140.Enabled() {
		if n := arch.ReleaseUnusedImage(); n > 0 {
			imageSize -= n
			fmt.Printf("  %d KiB of it released: crypto's FIPS 140-3 scratch buffer (FIPS mode is off)\n", n>>10)
		}
	}
	residentImage := uint64(imageSize)
	fmt.Printf("  %#x-%#x device tree\n", b.DTB, b.DTB+uintptr(dtSize))
	if m.InitrdEnd > m.InitrdStart {
		fmt.Printf("  %#x-%#x initrd (%d KiB)\n", m.InitrdStart, m.InitrdEnd, (m.InitrdEnd-m.InitrdStart)>>10)
	}
	for _, r := range m.Reserved {
		fmt.Printf("  %#x-%#x reserved (the device tree's reserved-memory)\n", r[0], r[1])
	}
	inUse, total := arch.MemoryStats()
	fmt.Printf("  %d MiB in frames, %d KiB in use; Go heap soft limit %d MiB\n", total>>20, inUse>>10, heapLimit>>20)
	mm.Charged.SetLimit(int64(total / mm.ChargeShareOfRAM))
	fmt.Printf("virtual: user 0-%#x; kernel in every table: direct map at %#x, runtime heap %#x-%#x, kernel code at %#x\n",
		mm.MaxUserVA, b.DirectMap, b.HeapStart, b.HeapEnd, b.KernelVA)
	cmd, cmdErr := ParseCmdline(m.Bootargs) // printed after the devices
	// The netstack draws its secrets (the keys of initial sequence numbers
	// and timestamp offsets, its hash seeds) from the runtime's getrandom
	// when it is made: seed that from the entropy device first, not from
	// the time CSR alone.
	var entropyBase, diskBase uint64
	var entropyNote, diskNote string
	var entropy *virtio.RNG
	var rootDisk *virtio.Block
	for _, d := range m.Devices {
		if d.Kind != "virtio-mmio" {
			continue
		}
		switch id, _ := virtio.Probe(uintptr(d.Base)); {
		case id == virtio.DeviceRNG && entropyBase == 0:
			entropy, entropyNote = openEntropy(k, d)
			entropyBase = d.Base
		case id == virtio.DeviceBlock && diskBase == 0:
			rootDisk, diskNote = openRootDisk(d)
			diskBase = d.Base
		}
	}
	// The root is unpacked while the netstack is made: on two harts or
	// more both run at once (each mostly code run once, whose translation
	// is QEMU's cost). Not beside the selftest, which counts memory.
	var root <-chan unpackedRoot
	if (m.InitrdEnd > m.InitrdStart || rootDisk != nil) && cmdErr == nil && !cmd.Selftest {
		root = startUnpack(m, rootDisk)
	}
	if lo, err := jnet.NewLoopback(); err != nil {
		fmt.Printf("kernel: network: %v\n", err)
	} else {
		k.Network = lo
		// Linux's tcp_max_tw_buckets: about one per 256 KiB of RAM.
		k.Network.SetMaxTimeWait(int(m.RAMSize / (256 << 10)))
	}
	fmt.Println("devices:")
	for _, d := range m.Devices {
		switch d.Kind {
		case "virtio-mmio":
			if id, ok := virtio.Probe(uintptr(d.Base)); ok && id != 0 {
				fmt.Printf("  %-22s virtio %s, irq %d\n", d.Node, virtio.DeviceName(id), d.IRQ)
				switch {
				case id == virtio.DeviceRNG && d.Base == entropyBase:
					fmt.Printf("  %-22s %s\n", "", entropyNote)
				case id == virtio.DeviceNet && k.Network != nil && !k.Network.HasEthernet():
					openNetwork(k.Network, d)
				case id == virtio.DeviceBlock && d.Base == diskBase:
					fmt.Printf("  %-22s %s\n", "", diskNote)
				}
			}
		default:
			fmt.Printf("  %-22s %s", d.Node, d.Kind)
			if d.IRQ != 0 {
				fmt.Printf(", irq %d", d.IRQ)
			}
			switch {
			case d.Kind == "uart" && uintptr(d.Base) == arch.ConsoleUART().Base:
				fmt.Printf(" (%s, reg-shift %d, reg-io-width %d): the console", d.Compatible, d.RegShift, d.RegIOWidth)
			case d.Kind == "plic":
				fmt.Printf(", S-mode contexts by hart id %v", m.PLICContexts)
			}
			fmt.Println()
		}
	}
	fmt.Printf("command line: %q\n", m.Bootargs)
	k.CommandLine = m.Bootargs
	if cmdErr != nil {
		fmt.Printf("kernel: command line: %v\n", cmdErr)
		arch.PowerOff(2)
	}
	tracing := cmd.Trace["syscall"]
	if tracing {
		k.SyscallTrace = os.Stdout
		fmt.Println("tracing: system calls")
	}
	if cmd.Profile > 0 {
		startProfiling(k, cmd.Profile)
	} else if n := arch.ReleaseProfiler(); n > 0 {
		residentImage -= uint64(n)
		fmt.Printf("memory: %d KiB of the image released: the profiler's tables (profile= is off)\n", n>>10)
	}
	// The time CSR starts at 0 when QEMU starts the machine.
	fmt.Printf("boot: since machine start: entry %d ms, main.main %d ms, now %d ms\n",
		arch.TicksToNs(b.BootTicks)/1e6, arch.TicksToNs(mainTicks)/1e6, arch.TicksToNs(arch.Ticks())/1e6)

	if cmd.NetEcho {
		if err := serveEcho(k.Network); err != nil {
			fmt.Printf("kernel: netecho: %v\n", err)
			arch.PowerOff(3)
		}
	}
	if cmd.Selftest {
		ok := Selftest(heapLimit, entropy, tracing)
		fmt.Printf("clock: the kernel's runtime trapped %d times to read a clock\n", arch.RuntimeClockTraps())
		if ok {
			arch.PowerOff(0)
		}
		arch.PowerOff(1)
	}
	if root != nil {
		r := <-root
		if r.err != nil {
			fmt.Printf("kernel: %v\n", r.err)
			arch.PowerOff(3)
		}
		tree := r.tree
		_, frames := arch.MemoryStats()
		// Half of RAM is tmpfs's default; the files live in the kernel's
		// heap here, within the quarter of RAM user memory leaves it.
		tree.SetSizeLimit(int64(frames / 4))
		if err := procfs.Mount(tree, k.Procfs()); err != nil {
			fmt.Printf("kernel: %v\n", err)
			arch.PowerOff(3)
		}
		if err := tree.PopulateDev(); err != nil {
			fmt.Printf("kernel: /dev: %v\n", err)
			arch.PowerOff(3)
		}
		if err := MountTmpfs(tree); err != nil {
			fmt.Printf("kernel: %v\n", err)
			arch.PowerOff(3)
		}
		fmt.Printf("memory: %s\n", residentLine(residentImage))
		if cmd.Stats > 0 {
			go printStats(k, tree, residentImage, time.Duration(cmd.Stats)*time.Second)
		}
		go reclaimWhenQuiet()
		fmt.Printf("boot: root file system unpacked in %d ms; init starts %d ms after machine start\n",
			r.took.Milliseconds(), arch.TicksToNs(arch.Ticks())/1e6)
		fmt.Println(r.source)
		if _, err := tree.Lookup(nil, cmd.Init, true); err == nil {
			status := runInit(k, tree, cmd.Init, cmd.InitArgs, startConsole(k, m))
			fmt.Printf("kernel: init exited with status %d; powering off\n", status)
			// Let the last segments init wrote (a final response, the FIN)
			// leave the network stack before the machine stops.
			time.Sleep(500 * time.Millisecond)
			arch.PowerOff(status)
		}
	}
	fmt.Printf("kernel: no init to run; idle, %s\n", residentLine(residentImage))
	for {
		time.Sleep(time.Hour)
	}
}

// printStats prints, every period, what the kernel holds: RAM (the image's
// resident part is residentImage), the Go heap, goroutines, processes,
// open descriptions, the tree's file data and what user programs have
// charged to the kernel-wide budget (a soak compares them before and
// after a load).
func printStats(k *kernel.Kernel, tree *fs.Tree, residentImage uint64, period time.Duration) {
	for {
		time.Sleep(period)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		used, _ := tree.Usage()
		fmt.Printf("stats: %s; heap %d KiB; goroutines %d; processes %d; descriptions %d; files %d KiB; charged %d KiB\n",
			residentLine(residentImage), ms.HeapAlloc>>10, runtime.NumGoroutine(), len(k.Processes()), fs.OpenDescriptions(), used>>10,
			mm.Charged.Total()>>10)
	}
}

// residentLine describes the RAM in use: the part of the kernel image that
// stays in RAM (residentImage) and the frames handed out (the Go heap,
// page tables, user memory, buffers).
func residentLine(residentImage uint64) string {
	inUse, _ := arch.MemoryStats()
	return fmt.Sprintf("%d KiB resident (image %d KiB, frames %d KiB)", (residentImage+inUse)>>10, residentImage>>10, inUse>>10)
}

// openRootDisk starts the block device that may hold the root (the first
// one: the root file system when no initramfs is given) and describes it
// for the boot log; it returns nil when the device cannot be used.
func openRootDisk(d Device) (*virtio.Block, string) {
	b, err := virtio.OpenBlock(uintptr(d.Base), int(d.IRQ))
	if err != nil {
		return nil, fmt.Sprintf("not used: %v", err)
	}
	return b, fmt.Sprintf("vda, %d KiB, read-only", b.Size()>>10)
}

// unpackedRoot is the root file system's tree, or why there is none.
type unpackedRoot struct {
	tree   *fs.Tree
	source string // the boot log's line on where it came from
	took   time.Duration
	err    error
}

// startUnpack builds the root tree from the initramfs, or else from the
// archives on rootDisk, in a goroutine of its own.
func startUnpack(m *Machine, rootDisk *virtio.Block) <-chan unpackedRoot {
	done := make(chan unpackedRoot, 1)
	go func() {
		start := time.Now()
		var r unpackedRoot
		if m.InitrdEnd > m.InitrdStart {
			image := unsafe.Slice((*byte)(mm.Ptr(uintptr(m.InitrdStart))), m.InitrdEnd-m.InitrdStart)
			r.tree, r.err = fs.Unpack(image)
			r.source = fmt.Sprintf("initramfs: %d KiB unpacked", len(image)>>10) // the tests find programs' output after this line
		} else {
			r.tree, r.err = fs.UnpackDisk(rootDisk, rootDisk.Size())
			if r.err == nil {
				// Files read from a root disk stay cached within an
				// eighth of RAM.
				_, frames := arch.MemoryStats()
				r.tree.SetDiskCacheLimit(int64(frames / 8))
			}
			r.source = fmt.Sprintf("root: the archives on the %d KiB disk, read on demand", rootDisk.Size()>>10)
		}
		r.took = time.Since(start)
		done <- r
	}()
	return done
}

// openNetwork starts the network device and network's Ethernet on it.
func openNetwork(network *jnet.Stack, d Device) {
	nic, err := virtio.OpenNet(uintptr(d.Base), int(d.IRQ))
	if err != nil {
		fmt.Printf("  %-22s not used: %v\n", "", err)
		return
	}
	c := jnet.QEMUUser(nic.MAC)
	if err := network.AddEthernet(c, nic); err != nil {
		fmt.Printf("  %-22s not used: %v\n", "", err)
		return
	}
	go nic.Receive(network.Deliver, network.EndOfBatch)
	fmt.Printf("  %-22s eth0 %x, %d.%d.%d.%d/%d via %d.%d.%d.%d\n", "", nic.MAC,
		c.Addr[0], c.Addr[1], c.Addr[2], c.Addr[3], c.Prefix, c.Gateway[0], c.Gateway[1], c.Gateway[2], c.Gateway[3])
}

// serveEcho runs a TCP echo service on port 7: the network path, driver to
// netstack, checked from the host before sockets reach user programs.
func serveEcho(network *jnet.Stack) error {
	if network == nil || !network.HasEthernet() {
		return fmt.Errorf("no network device")
	}
	ln, err := gonet.ListenTCP(network.Stack, tcpip.FullAddress{Port: 7}, ipv4.ProtocolNumber)
	if err != nil {
		return err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	fmt.Println("netecho: listening on tcp port 7")
	return nil
}

// openEntropy starts the virtio-rng device and reseeds the generators
// behind the kernel runtime's getrandom and behind k's getrandom(2) from
// it; it returns the device (nil when it cannot be used) and what the
// device listing says of it.
func openEntropy(k *kernel.Kernel, d Device) (*virtio.RNG, string) {
	rng, err := virtio.OpenRNG(uintptr(d.Base), int(d.IRQ))
	if err != nil {
		return nil, fmt.Sprintf("not used: %v", err)
	}
	seed := make([]byte, 32)
	if _, err := rng.Read(seed); err != nil {
		return nil, fmt.Sprintf("not used: %v", err)
	}
	arch.SeedRandom(seed)
	k.SeedRandom([32]byte(seed))
	return rng, fmt.Sprintf("seeded the kernel's generators with %d bytes", len(seed))
}

// runInit runs the first program as process 1 with the console on
// descriptors 0-2 and returns its exit status.
func runInit(k *kernel.Kernel, tree *fs.Tree, path string, args []string, tty *fs.TTY) int {
	regs := arch.NewUserFrame()
	if regs == nil {
		fmt.Println("kernel: out of memory starting init")
		return 3
	}
	var random [16]byte
	k.Random(random[:])
	env := []string{"HOME=/", "TERM=linux", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	as, err := loader.Exec(k.UserMemory(), k.VDSO(), tree, nil, path, append([]string{path}, args...), env, loader.StackSize, random, regs)
	if err != nil {
		fmt.Printf("kernel: cannot run %s: %v\n", path, err)
		arch.FreeUserFrame(regs)
		return 3
	}
	files := &fs.FDTable{}
	tree.RegisterMemoryDevices(k.Random)
	tree.RegisterDevice(5, 0, func() (fs.File, error) { return tty, nil })
	tree.RegisterDevice(5, 1, func() (fs.File, error) { return tty, nil })
	console := fs.NewDescription(tty, unix.O_RDWR)
	for i := 0; i < 3; i++ {
		files.Install(console, false, 0)
	}
	t := k.NewProcess(tree, as, files, path, append([]string{path}, args...), regs)
	k.StartTask(t)
	// While every user task waits (for a signal, say) the kernel idles; a
	// sleeping goroutine keeps the runtime from calling that a deadlock.
	go func() {
		for {
			time.Sleep(time.Hour)
		}
	}()
	<-t.Proc.Exited()
	return t.Proc.Status()
}

// startConsole makes the console a terminal: its output written by
// uart.Write (a FIFO's worth at a time, never holding the hart), the input
// of the UART the console writes to (arch.ConsoleUART), by interrupt,
// through the line discipline; without an interrupt the terminal has
// output only.
func startConsole(k *kernel.Kernel, m *Machine) *fs.TTY {
	tty := fs.NewTTY(uart.Write, k.SignalGroup)
	c := arch.ConsoleUART()
	for _, u := range m.DevicesOf("uart") {
		if uintptr(u.Base) != c.Base || c.Base == 0 || u.IRQ == 0 {
			continue
		}
		if err := uart.Start(c, int(u.IRQ), tty.Input); err != nil {
			fmt.Printf("kernel: console input: %v\n", err)
		}
		break
	}
	return tty
}

func be32(pa uintptr) uint32 {
	p := (*[4]byte)(mm.Ptr(pa))
	return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
}
