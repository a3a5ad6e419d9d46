/* bpf(2): array and hash maps (create, lookup, update, delete, next
 * key and their errnos), a socket filter on a Unix datagram socket that
 * counts datagrams in a map, drops some and truncates others, and
 * programs the verifier must refuse, as Linux 6.12 answers as root and
 * as nobody (unprivileged BPF disabled, Debian's default). */
#include "../../conform/conform.h"
#include <linux/bpf.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static long sys_bpf(int cmd, union bpf_attr *attr, unsigned size) { return syscall(SYS_bpf, cmd, attr, size); }

static int map_create(uint32_t type, uint32_t key, uint32_t value, uint32_t max, uint32_t flags) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	return sys_bpf(BPF_MAP_CREATE, &a, sizeof a);
}

static long elem(int cmd, int fd, const void *key, void *value, uint64_t flags) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_fd = fd;
	a.key = (uintptr_t)key;
	a.value = (uintptr_t)value;
	a.flags = flags;
	return sys_bpf(cmd, &a, sizeof a);
}

/* Instructions, as Linux's filter.h builds them. */
#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32_IMM(d, i) INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU64_IMM(op, d, i) INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU64_REG(op, d, s) INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define JMP_IMM(op, d, i, o) INSN(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP_FD(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
/* r0 = map_lookup_elem(map, &(u32)0) */
#define LOOKUP0(fd)                                                                                            \
	LD_MAP_FD(1, fd), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), ST(BPF_W, 2, 0, 0),                      \
	    CALL(BPF_FUNC_map_lookup_elem)

static char log_buf[65536];

static int prog_load(const struct bpf_insn *insns, int n, int type, int log_level) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = type;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t) "GPL";
	log_buf[0] = 0;
	if (log_level) {
		a.log_buf = (uintptr_t)log_buf;
		a.log_size = sizeof log_buf;
		a.log_level = log_level;
	}
	return sys_bpf(BPF_PROG_LOAD, &a, sizeof a);
}

#define LOAD(name, ...)                                                                                        \
	do {                                                                                                   \
		struct bpf_insn p_[] = {__VA_ARGS__};                                                          \
		int fd_ = prog_load(p_, sizeof p_ / sizeof p_[0], BPF_PROG_TYPE_SOCKET_FILTER, 1);             \
		SHOW(name, "%s", fd_ < 0 ? strerrorname_np(errno) : "loaded");                                 \
		SHOW(name ".log", "%s", fd_ < 0 && log_buf[0] ? "explains" : "");                              \
		if (fd_ >= 0)                                                                                  \
			close(fd_);                                                                            \
	} while (0)

static int array;

static void maps(void) {
	uint32_t k;
	uint64_t v = 0xdead;
	array = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	SHOW("array.create", "%s", array >= 0 ? "fd" : strerrorname_np(errno));
	k = 1;
	RET("array.lookup.fresh", elem(BPF_MAP_LOOKUP_ELEM, array, &k, &v, 0));
	SHOW("array.lookup.fresh.value", "%llu", (unsigned long long)v);
	v = 42;
	RET("array.update", elem(BPF_MAP_UPDATE_ELEM, array, &k, &v, BPF_ANY));
	v = 0;
	RET("array.lookup", elem(BPF_MAP_LOOKUP_ELEM, array, &k, &v, 0));
	SHOW("array.lookup.value", "%llu", (unsigned long long)v);
	RET("array.update.noexist", elem(BPF_MAP_UPDATE_ELEM, array, &k, &v, BPF_NOEXIST));
	RET("array.update.badflags", elem(BPF_MAP_UPDATE_ELEM, array, &k, &v, 3));
	RET("array.update.lock", elem(BPF_MAP_UPDATE_ELEM, array, &k, &v, BPF_F_LOCK));
	RET("array.delete", elem(BPF_MAP_DELETE_ELEM, array, &k, NULL, 0));
	k = 4;
	RET("array.update.past", elem(BPF_MAP_UPDATE_ELEM, array, &k, &v, BPF_ANY));
	RET("array.lookup.past", elem(BPF_MAP_LOOKUP_ELEM, array, &k, &v, 0));
	RET("array.lookup.badkey", elem(BPF_MAP_LOOKUP_ELEM, array, BAD, &v, 0));
	k = 1;
	RET("array.lookup.badvalue", elem(BPF_MAP_LOOKUP_ELEM, array, &k, BAD, 0));
	RET("array.lookup.badflags", elem(BPF_MAP_LOOKUP_ELEM, array, &k, &v, 8));
	uint32_t next = 77, from[] = {1, 3, 9};
	RET("array.next.null", elem(BPF_MAP_GET_NEXT_KEY, array, NULL, &next, 0));
	SHOW("array.next.null.key", "%u", next);
	for (int i = 0; i < 3; i++) {
		char name[32];
		next = 77;
		snprintf(name, sizeof name, "array.next.%u", from[i]);
		RET(name, elem(BPF_MAP_GET_NEXT_KEY, array, &from[i], &next, 0));
		SHOW(name, "key %u", next);
	}
	char buf[8];
	RET("array.read", read(array, buf, sizeof buf));
	RET("lookup.badfd", elem(BPF_MAP_LOOKUP_ELEM, 999, &k, &v, 0));
	int pipefd[2];
	pipe(pipefd);
	RET("lookup.pipe", elem(BPF_MAP_LOOKUP_ELEM, pipefd[0], &k, &v, 0));

	int hash = map_create(BPF_MAP_TYPE_HASH, 8, 8, 2, 0);
	SHOW("hash.create", "%s", hash >= 0 ? "fd" : strerrorname_np(errno));
	uint64_t k1 = 1, k2 = 2, k3 = 3, hk = 0;
	RET("hash.lookup.empty", elem(BPF_MAP_LOOKUP_ELEM, hash, &k1, &v, 0));
	RET("hash.next.empty", elem(BPF_MAP_GET_NEXT_KEY, hash, NULL, &hk, 0));
	RET("hash.update.exist", elem(BPF_MAP_UPDATE_ELEM, hash, &k1, &v, BPF_EXIST));
	RET("hash.update.1", elem(BPF_MAP_UPDATE_ELEM, hash, &k1, &v, BPF_NOEXIST));
	RET("hash.update.2", elem(BPF_MAP_UPDATE_ELEM, hash, &k2, &v, BPF_ANY));
	RET("hash.update.full", elem(BPF_MAP_UPDATE_ELEM, hash, &k3, &v, BPF_ANY));
	v = 7;
	RET("hash.update.replace", elem(BPF_MAP_UPDATE_ELEM, hash, &k1, &v, BPF_ANY));
	RET("hash.update.noexist", elem(BPF_MAP_UPDATE_ELEM, hash, &k1, &v, BPF_NOEXIST));
	v = 0;
	RET("hash.lookup", elem(BPF_MAP_LOOKUP_ELEM, hash, &k1, &v, 0));
	SHOW("hash.lookup.value", "%llu", (unsigned long long)v);
	int count = 0;
	uint64_t sum = 0;
	for (long r = elem(BPF_MAP_GET_NEXT_KEY, hash, NULL, &hk, 0); r == 0 && count < 10;
	     r = elem(BPF_MAP_GET_NEXT_KEY, hash, &hk, &hk, 0)) {
		count++;
		sum += hk;
	}
	SHOW("hash.keys", "%d sum %llu", count, (unsigned long long)sum);
	RET("hash.next.missing", elem(BPF_MAP_GET_NEXT_KEY, hash, &k3, &hk, 0));
	RET("hash.delete", elem(BPF_MAP_DELETE_ELEM, hash, &k2, NULL, 0));
	RET("hash.delete.again", elem(BPF_MAP_DELETE_ELEM, hash, &k2, NULL, 0));
	RET("hash.update.room", elem(BPF_MAP_UPDATE_ELEM, hash, &k3, &v, BPF_ANY));
	close(hash);

	RET("create.array.keysize", map_create(BPF_MAP_TYPE_ARRAY, 8, 8, 4, 0));
	RET("create.array.noentries", map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 0, 0));
	RET("create.array.novalue", map_create(BPF_MAP_TYPE_ARRAY, 4, 0, 4, 0));
	RET("create.array.prealloc", map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_NO_PREALLOC));
	RET("create.hash.nokey", map_create(BPF_MAP_TYPE_HASH, 0, 8, 4, 0));
	RET("create.hash.rdwr", map_create(BPF_MAP_TYPE_HASH, 8, 8, 4, BPF_F_RDONLY | BPF_F_WRONLY));
	RET("create.hash.huge", map_create(BPF_MAP_TYPE_HASH, 8, 1 << 23, 4, 0));
	RET("create.badtype", map_create(1000, 4, 8, 4, 0));
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	strcpy(a.map_name, "bad-name");
	RET("create.badname", sys_bpf(BPF_MAP_CREATE, &a, sizeof a));
	strcpy(a.map_name, "good_name.1");
	int named = sys_bpf(BPF_MAP_CREATE, &a, sizeof a);
	SHOW("create.name", "%s", named >= 0 ? "fd" : strerrorname_np(errno));
	close(named);
	static char big[8192];
	memcpy(big, &a, sizeof a);
	big[300] = 1;
	RET("bpf.tail", syscall(SYS_bpf, BPF_MAP_CREATE, big, 400));
	big[300] = 0;
	RET("bpf.page", syscall(SYS_bpf, BPF_MAP_CREATE, big, 4097));
	RET("bpf.badcmd", syscall(SYS_bpf, 1000, big, 64));
	RET("bpf.badattr", syscall(SYS_bpf, BPF_MAP_CREATE, BAD, 64));
	memset(big, 0, 64);
	((union bpf_attr *)big)->map_fd = array;
	big[40] = 1; /* past the element commands' flags */
	RET("lookup.checkattr", syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, big, 64));

	int ro = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_RDONLY);
	k = 0;
	RET("rdonly.lookup", elem(BPF_MAP_LOOKUP_ELEM, ro, &k, &v, 0));
	RET("rdonly.update", elem(BPF_MAP_UPDATE_ELEM, ro, &k, &v, BPF_ANY));
	RET("rdonly.fdmode", fcntl(ro, F_GETFL) & O_ACCMODE);
	RET("rdonly.cloexec", fcntl(ro, F_GETFD));
	close(ro);
}

/* filter counts each datagram in array[0], drops 1-byte ones and keeps
 * at most 3 bytes of the others. */
static void filter(void) {
	struct bpf_insn prog[] = {
		MOV64_REG(6, 1),
		LOOKUP0(array),
		JMP_IMM(BPF_JEQ, 0, 0, 3),
		LDX(BPF_DW, 1, 0, 0),
		ALU64_IMM(BPF_ADD, 1, 1),
		STX(BPF_DW, 0, 1, 0),
		LDX(BPF_W, 0, 6, 0), /* skb->len */
		JMP_IMM(BPF_JNE, 0, 1, 2),
		MOV64_IMM(0, 0),
		EXIT(),
		JMP_IMM(BPF_JLE, 0, 3, 1),
		MOV64_IMM(0, 3),
		EXIT(),
	};
	int fd = prog_load(prog, sizeof prog / sizeof prog[0], BPF_PROG_TYPE_SOCKET_FILTER, 1);
	SHOW("filter.load", "%s", fd >= 0 ? "fd" : strerrorname_np(errno));
	if (fd < 0)
		printf("%s\n", log_buf);
	char buf[16];
	RET("filter.read", read(fd, buf, sizeof buf));
	RET("filter.cloexec", fcntl(fd, F_GETFD));
	int sk[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sk);
	RET("attach.len8", setsockopt(sk[1], SOL_SOCKET, SO_ATTACH_BPF, &fd, 8));
	RET("attach.map", setsockopt(sk[1], SOL_SOCKET, SO_ATTACH_BPF, &array, 4));
	int bad = 999;
	RET("attach.badfd", setsockopt(sk[1], SOL_SOCKET, SO_ATTACH_BPF, &bad, 4));
	RET("detach.none", setsockopt(sk[1], SOL_SOCKET, SO_DETACH_BPF, &bad, 4));
	RET("attach", setsockopt(sk[1], SOL_SOCKET, SO_ATTACH_BPF, &fd, 4));
	close(fd); /* the socket keeps the program */
	RET("send.x", send(sk[0], "x", 1, 0));
	RET("send.hello", send(sk[0], "hello", 5, 0));
	RET("send.ab", send(sk[0], "ab", 2, 0));
	for (int i = 0; i < 3; i++) {
		memset(buf, 0, sizeof buf);
		errno = 0;
		long n = recv(sk[1], buf, sizeof buf, MSG_DONTWAIT);
		SHOW("recv", "%ld %s %s", n, buf, n < 0 ? strerrorname_np(errno) : "");
	}
	uint32_t k = 0;
	uint64_t v = 0;
	elem(BPF_MAP_LOOKUP_ELEM, array, &k, &v, 0);
	SHOW("filter.count", "%llu", (unsigned long long)v);
	RET("detach", setsockopt(sk[1], SOL_SOCKET, SO_DETACH_BPF, &bad, 4));
	RET("detach.again", setsockopt(sk[1], SOL_SOCKET, SO_DETACH_BPF, &bad, 4));
	RET("send.after", send(sk[0], "hello", 5, 0));
	RET("recv.after", recv(sk[1], buf, sizeof buf, MSG_DONTWAIT));
	close(sk[0]);
	close(sk[1]);
}

static void refused(void) {
	/* CVE-2017-16995's program (LTP bpf_prog03): a 32-bit -1 is
	 * 0xffffffff, so the pointer moves 64 bytes before the value. */
	LOAD("refuse.signext", LOOKUP0(array), JMP_IMM(BPF_JNE, 0, 0, 1), EXIT(), MOV32_IMM(1, -1),
	     ALU64_IMM(BPF_ADD, 1, 1), ALU64_IMM(BPF_RSH, 1, 26), MOV64_REG(2, 0), ALU64_REG(BPF_SUB, 2, 1),
	     STX(BPF_DW, 2, 1, 0), MOV64_IMM(0, 0), EXIT());
	LOAD("refuse.ornull", LOOKUP0(array), ST(BPF_DW, 0, 0, 1), MOV64_IMM(0, 0), EXIT());
	LOAD("refuse.pastvalue", LOOKUP0(array), JMP_IMM(BPF_JNE, 0, 0, 1), EXIT(), ST(BPF_W, 0, 8, 1),
	     MOV64_IMM(0, 0), EXIT());
	LOAD("refuse.uninit", MOV64_REG(0, 5), EXIT());
	LOAD("refuse.noreturn", EXIT());
	LOAD("refuse.stack", LDX(BPF_DW, 0, 10, -8), EXIT());
	LOAD("refuse.ctxdata", LDX(BPF_W, 0, 1, 76), EXIT());
	LOAD("refuse.ctxwrite", ST(BPF_W, 1, 0, 1), MOV64_IMM(0, 0), EXIT());
	LOAD("refuse.fp", MOV64_IMM(10, 0), EXIT());
	LOAD("refuse.helper", CALL(100000), MOV64_IMM(0, 0), EXIT());
	LOAD("refuse.loop", MOV64_IMM(0, 0), INSN(BPF_JMP | BPF_JA, 0, 0, -1, 0), EXIT());
	LOAD("refuse.range", MOV64_IMM(0, 0), JMP_IMM(BPF_JEQ, 0, 0, 5), EXIT());
	LOAD("refuse.falloff", MOV64_IMM(0, 0));
	LOAD("refuse.opcode", INSN(0xff, 0, 0, 0, 0), EXIT());
	LOAD("refuse.divzero", MOV64_IMM(0, 1), ALU64_IMM(BPF_DIV, 0, 0), EXIT());
	LOAD("refuse.mapfd", LD_MAP_FD(1, 999), MOV64_IMM(0, 0), EXIT());
	LOAD("accept.known", MOV64_IMM(0, 5), ALU64_IMM(BPF_MUL, 0, 3), EXIT());
	struct bpf_insn ok[] = {MOV64_IMM(0, 0), EXIT()};
	RET("load.empty", prog_load(ok, 0, BPF_PROG_TYPE_SOCKET_FILTER, 0));
	RET("load.toomany", prog_load(ok, 1000001, BPF_PROG_TYPE_SOCKET_FILTER, 0));
	RET("load.badtype", prog_load(ok, 2, 1000, 0));
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)ok;
	a.insn_cnt = 2;
	a.license = (uintptr_t) "GPL";
	a.log_buf = (uintptr_t)log_buf;
	a.log_size = sizeof log_buf;
	RET("load.loglevel0", sys_bpf(BPF_PROG_LOAD, &a, sizeof a));
	a.log_level = 1;
	a.log_size = 0;
	RET("load.logsize0", sys_bpf(BPF_PROG_LOAD, &a, sizeof a));
	a.log_level = 0;
	a.log_buf = 0;
	a.license = (uintptr_t)BAD;
	RET("load.badlicense", sys_bpf(BPF_PROG_LOAD, &a, sizeof a));
	a.license = (uintptr_t) "GPL";
	a.insns = (uintptr_t)BAD;
	RET("load.badinsns", sys_bpf(BPF_PROG_LOAD, &a, sizeof a));
	a.insns = (uintptr_t)ok;
	a.prog_flags = 1 << 30;
	RET("load.badflags", sys_bpf(BPF_PROG_LOAD, &a, sizeof a));
}

static void as_nobody(void) {
	RET("nobody.setuid", setuid(65534));
	RET("nobody.create", map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0));
	RET("nobody.create.badsize", map_create(BPF_MAP_TYPE_ARRAY, 8, 8, 1, 0));
	RET("nobody.create.ringbuf", map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0));
	struct bpf_insn ok[] = {MOV64_IMM(0, 0), EXIT()};
	RET("nobody.load", prog_load(ok, 2, BPF_PROG_TYPE_SOCKET_FILTER, 0));
	uint32_t k = 0;
	uint64_t v = 0;
	RET("nobody.lookup", elem(BPF_MAP_LOOKUP_ELEM, array, &k, &v, 0));
	put_file("nobody.sysctl", "/proc/sys/kernel/unprivileged_bpf_disabled", "0");
}

int main(void) {
	mkdir("/proc", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	show_file("sysctl", "/proc/sys/kernel/unprivileged_bpf_disabled");
	put_file("sysctl.bad", "/proc/sys/kernel/unprivileged_bpf_disabled", "3");
	maps();
	filter();
	refused();
	SHOW("nobody", "%d", run_child(as_nobody));
	return 0;
}
