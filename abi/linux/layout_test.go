package linux

import (
	"go/build"
	"go/importer"
	"go/token"
	"go/types"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// riscv64 type-checks a package from source as GOOS=linux GOARCH=riscv64
// builds it, whatever the host: unix declares its types per architecture.
func riscv64(t *testing.T, path string) *types.Package {
	t.Helper()
	if pkg := riscv64Packages[path]; pkg != nil {
		return pkg
	}
	ctxt := build.Default
	ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled = "linux", "riscv64", false
	saved := build.Default
	build.Default = ctxt // the source importer reads it
	defer func() { build.Default = saved }()
	pkg, err := importer.ForCompiler(token.NewFileSet(), "source", nil).Import(path)
	if err != nil {
		t.Fatal(err)
	}
	riscv64Packages[path] = pkg
	return pkg
}

// riscv64Packages holds the packages riscv64 checked: unix takes seconds.
var riscv64Packages = map[string]*types.Package{}

var riscv64Sizes = types.SizesFor("gc", "riscv64")

func structOf(t *testing.T, pkg *types.Package, name string) *types.Struct {
	t.Helper()
	obj := pkg.Scope().Lookup(name)
	if obj == nil {
		t.Fatalf("%s has no %s", pkg.Path(), name)
	}
	return obj.Type().Underlying().(*types.Struct)
}

func offsets(s *types.Struct) (map[string]int64, map[string]int64) {
	fields := make([]*types.Var, s.NumFields())
	for i := range fields {
		fields[i] = s.Field(i)
	}
	at, size := map[string]int64{}, map[string]int64{}
	for i, off := range riscv64Sizes.Offsetsof(fields) {
		at[fields[i].Name()], size[fields[i].Name()] = off, riscv64Sizes.Sizeof(fields[i].Type())
	}
	return at, size
}

// TestLayoutMatchesUnix checks each structure that golang.org/x/sys/unix
// also declares for linux/riscv64 against unix's: the same size, and each
// named field at the offset of unix's field of that name (case and
// underscores aside, or as renamed; renamed to "": unix leaves it opaque,
// and TestLayoutOffsets checks it).
func TestLayoutMatchesUnix(t *testing.T) {
	ours, theirs := riscv64(t, "github.com/jiege-go/jiege/abi/linux"), riscv64(t, "golang.org/x/sys/unix")
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for _, c := range []struct {
		ours, theirs string
		renames      map[string]string
	}{
		{"Timespec", "Timespec", nil},
		{"Timeval", "Timeval", nil},
		{"Itimerval", "Itimerval", nil},
		{"Tms", "Tms", nil},
		{"Stat", "Stat_t", map[string]string{"Atime": "Atim", "Mtime": "Mtim", "Ctime": "Ctim"}},
		{"StatxTimestamp", "StatxTimestamp", nil},
		{"Statx", "Statx_t", nil},
		{"Statfs", "Statfs_t", nil},
		{"Flock", "Flock_t", nil},
		{"InotifyEvent", "InotifyEvent", nil},
		{"Iovec", "Iovec", nil},
		{"OpenHow", "OpenHow", nil},
		{"PollFd", "PollFd", nil},
		{"EpollEvent", "EpollEvent", map[string]string{"Data": ""}}, // unix: fd and pad
		{"Winsize", "Winsize", nil},
		{"Rusage", "Rusage", nil},
		{"Rlimit", "Rlimit", nil},
		{"Sysinfo", "Sysinfo_t", map[string]string{"MemUnit": "Unit"}},
		{"Siginfo", "Siginfo", map[string]string{"Pid": "", "UID": "", "Value": ""}},
		{"SockaddrInet4", "RawSockaddrInet4", nil},
		{"SockaddrInet6", "RawSockaddrInet6", nil},
		{"SockaddrUnix", "RawSockaddrUnix", nil},
		{"SockaddrNetlink", "RawSockaddrNetlink", nil},
		{"Linger", "Linger", nil},
		{"Msghdr", "Msghdr", nil},
		{"Mmsghdr", "Mmsghdr", nil},
		{"Cmsghdr", "Cmsghdr", nil},
		{"Ucred", "Ucred", nil},
		{"NlMsghdr", "NlMsghdr", nil},
		{"IfInfomsg", "IfInfomsg", nil},
		{"IfAddrmsg", "IfAddrmsg", nil},
		{"RtMsg", "RtMsg", nil},
		{"RtAttr", "RtAttr", nil},
		{"SchedAttr", "SchedAttr", nil},
		{"Timex", "Timex", nil},
		{"CapUserHeader", "CapUserHeader", nil},
		{"CapUserData", "CapUserData", nil},
	} {
		o, u := structOf(t, ours, c.ours), structOf(t, theirs, c.theirs)
		if so, su := riscv64Sizes.Sizeof(o), riscv64Sizes.Sizeof(u); so != su {
			t.Errorf("%s is %d bytes, unix.%s %d", c.ours, so, c.theirs, su)
		}
		oAt, oSize := offsets(o)
		uAt, uSize := offsets(u)
		for name := range oAt {
			if name == "_" {
				continue
			}
			want, renamed := c.renames[name]
			if renamed && want == "" {
				continue
			}
			if !renamed {
				want = name
			}
			found := false
			for un := range uAt {
				if norm(un) != norm(want) {
					continue
				}
				found = true
				if oAt[name] != uAt[un] || oSize[name] != uSize[un] {
					t.Errorf("%s.%s at %d (%d bytes), unix.%s.%s at %d (%d bytes)", c.ours, name, oAt[name], oSize[name],
						c.theirs, un, uAt[un], uSize[un])
				}
			}
			if !found {
				t.Errorf("%s.%s: unix.%s has no field %s", c.ours, name, c.theirs, want)
			}
		}
	}
}

// TestStructsAreCLayout checks every structure of the package: fixed-size
// integers, arrays and structures of them, without implicit padding on
// riscv64, so that its Go memory is the C structure.
func TestStructsAreCLayout(t *testing.T) {
	pkg := riscv64(t, "github.com/jiege-go/jiege/abi/linux")
	n := 0
	for _, name := range pkg.Scope().Names() {
		obj, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		if why := cLayout(riscv64Sizes, obj.Type()); why != "" {
			t.Errorf("%s: %s", name, why)
		}
		n++
	}
	if n < 30 {
		t.Fatalf("checked %d structures; the package has more than 30", n)
	}
}

// TestLayoutOffsets checks the structures unix does not declare (or
// declares otherwise) against the sizes and offsets of Linux's headers,
// checked with offsetof() in a riscv64 glibc program.
func TestLayoutOffsets(t *testing.T) {
	var (
		frame RtSigframe
		si    Siginfo
		ss    StackT
		ca    CloneArgs
		ifr   Ifreq
		ifc   Ifconf
	)
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(struct rt_sigframe)", unsafe.Sizeof(frame), 1088},
		{"offsetof(rt_sigframe, uc)", unsafe.Offsetof(frame.UC), 128},
		{"offsetof(ucontext, uc_stack)", unsafe.Offsetof(frame.UC.Stack), 16},
		{"offsetof(ucontext, uc_sigmask)", unsafe.Offsetof(frame.UC.Sigmask), 40},
		{"offsetof(ucontext, uc_mcontext)", unsafe.Offsetof(frame.UC.Mcontext), 176},
		{"offsetof(sigcontext, sc_fpregs)", unsafe.Offsetof(frame.UC.Mcontext.F), 256},
		{"offsetof(sigcontext, sc_fpregs.d.fcsr)", unsafe.Offsetof(frame.UC.Mcontext.FCSR), 512},
		{"sizeof(struct sigcontext)", unsafe.Sizeof(frame.UC.Mcontext), 784},
		{"offsetof(epoll_event, data)", unsafe.Offsetof(EpollEvent{}.Data), 8},
		{"sizeof(siginfo_t)", unsafe.Sizeof(si), 128},
		{"offsetof(siginfo_t, si_pid)", unsafe.Offsetof(si.Pid), 16},
		{"offsetof(siginfo_t, si_uid)", unsafe.Offsetof(si.UID), 20},
		{"offsetof(siginfo_t, si_value)", unsafe.Offsetof(si.Value), 24},
		{"sizeof(struct sigaction)", unsafe.Sizeof(Sigaction{}), 24},
		{"sizeof(stack_t)", unsafe.Sizeof(ss), 24},
		{"offsetof(stack_t, ss_flags)", unsafe.Offsetof(ss.Flags), 8},
		{"offsetof(stack_t, ss_size)", unsafe.Offsetof(ss.Size), 16},
		{"sizeof(struct clone_args)", unsafe.Sizeof(ca), 88},
		{"sizeof(struct __sk_buff)", unsafe.Sizeof(SkBuff{}), 192},
		{"offsetof(__sk_buff, cb)", unsafe.Offsetof(SkBuff{}.Cb), 48},
		{"offsetof(__sk_buff, napi_id)", unsafe.Offsetof(SkBuff{}.NapiID), 84},
		{"offsetof(__sk_buff, flow_keys)", unsafe.Offsetof(SkBuff{}.FlowKeys), 144},
		{"offsetof(__sk_buff, gso_segs)", unsafe.Offsetof(SkBuff{}.GsoSegs), 164},
		{"offsetof(__sk_buff, gso_size)", unsafe.Offsetof(SkBuff{}.GsoSize), 176},
		{"offsetof(__sk_buff, hwtstamp)", unsafe.Offsetof(SkBuff{}.Hwtstamp), 184},
		{"sizeof(struct bpf_insn)", unsafe.Sizeof(BPFInsn{}), 8},
		{"offsetof(bpf_attr, map_token_fd)", unsafe.Offsetof(BPFMapCreateAttr{}.MapTokenFd), 76},
		{"offsetof(bpf_attr, flags)", unsafe.Offsetof(BPFMapElemAttr{}.Flags), 24},
		{"offsetof(bpf_attr, log_true_size)", unsafe.Offsetof(BPFProgLoadAttr{}.LogTrueSize), 140},
		{"offsetof(bpf_attr, prog_token_fd)", unsafe.Offsetof(BPFProgLoadAttr{}.ProgTokenFd), 144},
		{"sizeof(union bpf_attr)", unsafe.Sizeof(BPFProgLoadAttr{}), BPFAttrSize},
		{"sizeof(struct landlock_ruleset_attr)", unsafe.Sizeof(LandlockRulesetAttr{}), 24},
		{"sizeof(struct perf_event_attr)", unsafe.Sizeof(PerfEventAttr{}), PerfAttrSize},
		{"offsetof(perf_event_attr, read_format) + 8 (the bit fields)", unsafe.Offsetof(PerfEventAttr{}.Flags), 40},
		{"offsetof(perf_event_attr, clockid)", unsafe.Offsetof(PerfEventAttr{}.Clockid), 92},
		{"offsetof(perf_event_attr, aux_sample_size) + 4 (aux_action)", unsafe.Offsetof(PerfEventAttr{}.AuxAction), 116},
		{"offsetof(perf_event_attr, sig_data)", unsafe.Offsetof(PerfEventAttr{}.SigData), 120},
		{"offsetof(perf_event_attr, config3)", unsafe.Offsetof(PerfEventAttr{}.Config3), 128},
		{"sizeof(struct landlock_path_beneath_attr)", unsafe.Sizeof(LandlockPathBeneathAttr{}), 12},
		{"offsetof(landlock_path_beneath_attr, parent_fd)", unsafe.Offsetof(LandlockPathBeneathAttr{}.ParentFd), 8},
		{"sizeof(struct landlock_net_port_attr)", unsafe.Sizeof(LandlockNetPortAttr{}), 16},
		{"offsetof(clone_args, exit_signal)", unsafe.Offsetof(ca.ExitSignal), 32},
		{"offsetof(clone_args, tls)", unsafe.Offsetof(ca.TLS), 56},
		{"sizeof(struct inotify_event)", unsafe.Sizeof(InotifyEvent{}), SizeofInotifyEvent},
		{"sizeof(struct kcmp_epoll_slot)", unsafe.Sizeof(KcmpEpollSlot{}), 16},
		{"offsetof(kcmp_epoll_slot, toff)", unsafe.Offsetof(KcmpEpollSlot{}.TOff), 8},
		{"sizeof(struct f_owner_ex)", unsafe.Sizeof(FOwnerEx{}), 8},
		{"offsetof(f_owner_ex, pid)", unsafe.Offsetof(FOwnerEx{}.Pid), 4},
		{"sizeof(struct robust_list_head)", unsafe.Sizeof(RobustListHead{}), 24},
		{"sizeof(struct termios)", unsafe.Sizeof(Termios{}), 36},
		{"sizeof(struct itimerspec)", unsafe.Sizeof(Itimerspec{}), 32},
		{"sizeof(struct sigevent)", unsafe.Sizeof(Sigevent{}), 64},
		{"offsetof(sigevent, sigev_notify)", unsafe.Offsetof(Sigevent{}.Notify), 12},
		{"offsetof(sigevent, _sigev_un._tid)", unsafe.Offsetof(Sigevent{}.TID), 16},
		{"sizeof(struct ifreq)", unsafe.Sizeof(ifr), 40},
		{"offsetof(ifreq, ifr_ifru)", unsafe.Offsetof(ifr.Data), unix.IFNAMSIZ},
		{"sizeof(struct ifconf)", unsafe.Sizeof(ifc), 16},
		{"offsetof(ifconf, ifc_buf)", unsafe.Offsetof(ifc.Buf), 8},
		{"sizeof(struct ifa_cacheinfo)", unsafe.Sizeof(IfaCacheinfo{}), 16},
		// System V IPC, as riscv64-linux-gnu-gcc lays out glibc's types.
		{"sizeof(struct ipc_perm)", unsafe.Sizeof(IpcPerm{}), 48},
		{"offsetof(ipc_perm, __seq)", unsafe.Offsetof(IpcPerm{}.Seq), 24},
		{"sizeof(struct shmid_ds)", unsafe.Sizeof(ShmidDs{}), 112},
		{"offsetof(shmid_ds, shm_cpid)", unsafe.Offsetof(ShmidDs{}.Cpid), 80},
		{"offsetof(shmid_ds, shm_nattch)", unsafe.Offsetof(ShmidDs{}.Nattch), 88},
		{"sizeof(struct semid_ds)", unsafe.Sizeof(SemidDs{}), 88},
		{"offsetof(semid_ds, sem_nsems)", unsafe.Offsetof(SemidDs{}.Nsems), 64},
		{"sizeof(struct msqid_ds)", unsafe.Sizeof(MsqidDs{}), 120},
		{"offsetof(msqid_ds, msg_qbytes)", unsafe.Offsetof(MsqidDs{}.Qbytes), 88},
		{"offsetof(msqid_ds, msg_lspid)", unsafe.Offsetof(MsqidDs{}.Lspid), 96},
		{"sizeof(struct shminfo)", unsafe.Sizeof(ShmInfo64{}), 72},
		{"sizeof(struct shm_info)", unsafe.Sizeof(ShmInfo{}), 48},
		{"sizeof(struct seminfo)", unsafe.Sizeof(Seminfo{}), 40},
		{"sizeof(struct msginfo)", unsafe.Sizeof(Msginfo{}), 32},
		{"sizeof(struct sembuf)", unsafe.Sizeof(Sembuf{}), 6},
		{"sizeof(struct rtnl_link_stats64)", unsafe.Sizeof(RtnlLinkStats64{}), 25 * 8},
		{"sizeof(struct rtnl_link_stats)", unsafe.Sizeof(RtnlLinkStats{}), 24 * 4},
		{"sizeof(struct nlmsghdr)", unsafe.Sizeof(NlMsghdr{}), unix.NLMSG_HDRLEN},
		{"CMSG_LEN(0)", uintptr(SizeofCmsghdr), unix.SizeofCmsghdr},
		{"offsetof(msghdr, msg_namelen)", uintptr(OffsetofMsghdrNamelen), 8},
		{"offsetof(mmsghdr, msg_len)", uintptr(OffsetofMmsghdrLen), 56},
		{"sizeof(struct mmsghdr)", uintptr(SizeofMmsghdr), unix.SizeofMmsghdr},
		// io_uring, as riscv64-linux-gnu-gcc lays out linux/io_uring.h.
		{"sizeof(struct io_uring_sqe)", unsafe.Sizeof(IOUringSQE{}), 64},
		{"offsetof(io_uring_sqe, rw_flags)", unsafe.Offsetof(IOUringSQE{}.OpFlags), 28},
		{"offsetof(io_uring_sqe, user_data)", unsafe.Offsetof(IOUringSQE{}.UserData), 32},
		{"offsetof(io_uring_sqe, buf_index)", unsafe.Offsetof(IOUringSQE{}.BufIndex), 40},
		{"offsetof(io_uring_sqe, splice_fd_in)", unsafe.Offsetof(IOUringSQE{}.SpliceFDIn), 44},
		{"offsetof(io_uring_sqe, addr3)", unsafe.Offsetof(IOUringSQE{}.Addr3), 48},
		{"sizeof(struct io_uring_cqe)", unsafe.Sizeof(IOUringCQE{}), 16},
		{"sizeof(struct io_uring_params)", unsafe.Sizeof(IOUringParams{}), 120},
		{"offsetof(io_uring_params, features)", unsafe.Offsetof(IOUringParams{}.Features), 20},
		{"offsetof(io_uring_params, sq_off)", unsafe.Offsetof(IOUringParams{}.SQOff), 40},
		{"offsetof(io_uring_params, cq_off)", unsafe.Offsetof(IOUringParams{}.CQOff), 80},
		{"sizeof(struct io_uring_getevents_arg)", unsafe.Sizeof(IOUringGeteventsArg{}), 24},
		{"sizeof(struct io_uring_probe)", unsafe.Sizeof(IOUringProbe{}), 16},
		{"sizeof(struct io_uring_probe_op)", unsafe.Sizeof(IOUringProbeOp{}), 8},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
}

func TestSiginfoUnion(t *testing.T) {
	var si Siginfo
	si.SetAddr(0x1122334455667788)
	if b := AsBytes(&si)[16:24]; Uint64(b) != 0x1122334455667788 {
		t.Errorf("si_addr encodes as % x", b)
	}
	si = Siginfo{}
	si.SetStatus(-1)
	if b := AsBytes(&si); Uint64(b[24:]) != 0xffffffff {
		t.Errorf("si_status encodes as % x", b[24:32])
	}
}

func TestNetworkByteOrder(t *testing.T) {
	sa := SockaddrInet4{Family: unix.AF_INET, Port: Htons(0x1f90), Addr: [4]byte{127, 0, 0, 1}}
	if b := AsBytes(&sa); b[2] != 0x1f || b[3] != 0x90 {
		t.Errorf("sin_port encodes as % x", b[2:4])
	}
	if Ntohs(sa.Port) != 0x1f90 {
		t.Errorf("Ntohs(Htons(0x1f90)) = %#x", Ntohs(sa.Port))
	}
	for bits, want := range map[int][4]byte{0: {}, 8: {255}, 24: {255, 255, 255}, 32: {255, 255, 255, 255}} {
		if got := Inet4Mask(bits); got != want {
			t.Errorf("Inet4Mask(%d) = %v, want %v", bits, got, want)
		}
	}
}

func TestAppendDirent64(t *testing.T) {
	b := AppendDirent64(nil, 7, 2, unix.DT_DIR, "..")
	if len(b) != 24 || Uint64(b) != 7 || Uint64(b[8:]) != 2 || b[16] != 24 || b[18] != unix.DT_DIR || string(b[19:21]) != ".." || b[21] != 0 {
		t.Errorf("dirent64 of ..: % x", b)
	}
}
