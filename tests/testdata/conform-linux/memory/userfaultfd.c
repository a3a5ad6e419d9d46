/* userfaultfd: the UFFDIO_API handshake and its errors, UFFDIO_REGISTER
 * and UNREGISTER's errors, a missing-page fault of another thread read as
 * a struct uffd_msg and resolved by UFFDIO_COPY, ZEROPAGE and MOVE, a
 * wake without resolving (the thread faults again), POISON's SIGBUS, and
 * a close of the file while a thread waits (the fault then finds plain
 * memory: zeros). qemu-user has no userfaultfd, so Linux is the oracle. */
#include "../../conform/conform.h"
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PAGE 4096

/* Newer than the cross compiler's headers. */
#define FEATURE_POISON (1ULL << 14)
#define FEATURE_MOVE (1ULL << 16)
struct move {
	uint64_t dst, src, len, mode;
	int64_t move;
};
struct poison {
	struct uffdio_range range;
	uint64_t mode;
	int64_t updated;
};
#define IOC_MOVE _IOWR(UFFDIO, 0x05, struct move)
#define IOC_POISON _IOWR(UFFDIO, 0x08, struct poison)

static int uffd(int flags) { return syscall(__NR_userfaultfd, flags); }

static int api(int fd, uint64_t features)
{
	struct uffdio_api a = {.api = UFFD_API, .features = features};
	return ioctl(fd, UFFDIO_API, &a);
}

static int reg(int fd, void *start, uint64_t len, uint64_t mode)
{
	struct uffdio_register r = {.range = {(uintptr_t)start, len}, .mode = mode};
	return ioctl(fd, UFFDIO_REGISTER, &r);
}

static int unreg(int fd, void *start, uint64_t len)
{
	struct uffdio_range r = {(uintptr_t)start, len};
	return ioctl(fd, UFFDIO_UNREGISTER, &r);
}

static char *target; /* the page the toucher touches */
static long offset;  /* where in it */
static int writes;   /* a store, not a load */
static char seen;    /* what the toucher read or stored */
static pid_t toucher_tid;

static void *touch(void *arg)
{
	toucher_tid = gettid();
	if (writes) {
		((volatile char *)target)[offset] = 'w';
		seen = ((volatile char *)target)[offset];
	} else {
		seen = ((volatile char *)target)[offset];
	}
	return NULL;
}

/* wait_event waits until fd has a fault to read. */
static void wait_event(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (poll(&p, 1, -1) != 1)
		;
}

static void show_msg(const char *name, struct uffd_msg *m, char *page)
{
	SHOW(name, "event %#x flags %llu at page %d offset %lld reserved %d %d %d", m->event,
	     (unsigned long long)m->arg.pagefault.flags,
	     (char *)(uintptr_t)(m->arg.pagefault.address & ~(PAGE - 1ULL)) == page,
	     (long long)(m->arg.pagefault.address & (PAGE - 1)), m->reserved1, m->reserved2, m->reserved3);
}

static volatile int usr1_seen;
static void on_usr1(int sig) { usr1_seen++; }

static sigjmp_buf bus_jump;
static void on_bus(int sig, siginfo_t *si, void *uc) { siglongjmp(bus_jump, si->si_signo); }

int main(void)
{
	char *mem = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *src = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(src, 'X', PAGE);

	/* Creation and the handshake. */
	RET("bad flags", uffd(0x100));
	int fd = uffd(O_CLOEXEC | O_NONBLOCK);
	SHOW("made", "%d", fd >= 0);
	SHOW("cloexec", "%d", fcntl(fd, F_GETFD));
	SHOW("nonblock", "%d", (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
	RET("register before api", reg(fd, mem, PAGE, UFFDIO_REGISTER_MODE_MISSING));
	char buf[64];
	RET("read before api", read(fd, buf, sizeof buf));
	struct pollfd p = {.fd = fd, .events = POLLIN};
	RET("poll before api", poll(&p, 1, 0));
	SHOW("poll before api revents", "%#x", p.revents);
	struct uffdio_api a = {.api = 0, .features = 0, .ioctls = 7};
	RET("api wrong version", ioctl(fd, UFFDIO_API, &a));
	SHOW("api wrong version zeroed", "%llu %llu %llu", (unsigned long long)a.api,
	     (unsigned long long)a.features, (unsigned long long)a.ioctls);
	a = (struct uffdio_api){.api = UFFD_API, .features = 1ULL << 40};
	RET("api unknown feature", ioctl(fd, UFFDIO_API, &a));
	RET("api bad pointer", ioctl(fd, UFFDIO_API, BAD));
	a = (struct uffdio_api){.api = UFFD_API};
	RET("api", ioctl(fd, UFFDIO_API, &a));
	SHOW("api version", "%#llx", (unsigned long long)a.api);
	SHOW("api ioctls", "%#llx", (unsigned long long)a.ioctls);
	uint64_t want = UFFD_FEATURE_SIGBUS | UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_EXACT_ADDRESS | FEATURE_POISON | FEATURE_MOVE;
	SHOW("api features served", "%d", (a.features & want) == want);
	RET("api again", api(fd, 0));
	RET("short read", read(fd, buf, sizeof(struct uffd_msg) - 1));
	RET("read nothing pending", read(fd, buf, sizeof buf));
	RET("poll nothing pending", poll(&p, 1, 0));
	RET("unknown ioctl", ioctl(fd, _IOWR(UFFDIO, 0x30, struct uffdio_range), buf));

	/* Registration. */
	RET("register unaligned", reg(fd, mem + 1, PAGE, UFFDIO_REGISTER_MODE_MISSING));
	RET("register odd length", reg(fd, mem, PAGE + 1, UFFDIO_REGISTER_MODE_MISSING));
	RET("register empty", reg(fd, mem, 0, UFFDIO_REGISTER_MODE_MISSING));
	RET("register no mode", reg(fd, mem, PAGE, 0));
	RET("register unknown mode", reg(fd, mem, PAGE, 8));
	RET("register minor on anonymous", reg(fd, mem, PAGE, UFFDIO_REGISTER_MODE_MINOR));
	RET("register low address", reg(fd, (void *)4096, PAGE, UFFDIO_REGISTER_MODE_MISSING));
	char *hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, PAGE);
	RET("register hole", reg(fd, hole, PAGE, UFFDIO_REGISTER_MODE_MISSING));
	int filefd = open("/proc/self/exe", O_RDONLY);
	char *file = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, filefd, 0);
	RET("register file", reg(fd, file, PAGE, UFFDIO_REGISTER_MODE_MISSING));
	RET("register bad pointer", ioctl(fd, UFFDIO_REGISTER, BAD));
	struct uffdio_register r = {.range = {(uintptr_t)mem, 4 * PAGE}, .mode = UFFDIO_REGISTER_MODE_MISSING};
	RET("register", ioctl(fd, UFFDIO_REGISTER, &r));
	SHOW("register ioctls", "%#llx", (unsigned long long)r.ioctls);
	RET("register again", reg(fd, mem, 2 * PAGE, UFFDIO_REGISTER_MODE_MISSING));
	int other = uffd(0);
	api(other, 0);
	RET("register other context", reg(other, mem + PAGE, PAGE, UFFDIO_REGISTER_MODE_MISSING));
	RET("register other context beside", reg(other, mem + 4 * PAGE, PAGE, UFFDIO_REGISTER_MODE_MISSING));
	RET("unregister unaligned", unreg(fd, mem + 1, PAGE));
	RET("unregister hole", unreg(fd, hole, PAGE));
	RET("unregister other", unreg(other, mem + 4 * PAGE, PAGE));
	close(other);

	/* A load, resolved by UFFDIO_COPY. */
	pthread_t th;
	target = mem, offset = 15, writes = 0;
	pthread_create(&th, NULL, touch, NULL);
	wait_event(fd);
	RET("poll pending", poll(&p, 1, 0));
	SHOW("poll pending revents", "%#x", p.revents);
	struct uffd_msg m[2];
	RET("read fault", read(fd, m, sizeof m));
	show_msg("load fault", &m[0], mem);
	RET("read after taken", read(fd, m, sizeof m));
	struct uffdio_copy c = {.dst = (uintptr_t)mem + 1, .src = (uintptr_t)src, .len = PAGE};
	RET("copy unaligned", ioctl(fd, UFFDIO_COPY, &c));
	c = (struct uffdio_copy){.dst = (uintptr_t)mem, .src = (uintptr_t)src, .len = PAGE, .mode = 4};
	RET("copy bad mode", ioctl(fd, UFFDIO_COPY, &c));
	c = (struct uffdio_copy){.dst = (uintptr_t)src, .src = (uintptr_t)src, .len = PAGE};
	RET("copy unregistered", ioctl(fd, UFFDIO_COPY, &c));
	SHOW("copy unregistered result", "%lld", (long long)c.copy);
	c = (struct uffdio_copy){.dst = (uintptr_t)mem, .src = (uintptr_t)src, .len = PAGE};
	RET("copy", ioctl(fd, UFFDIO_COPY, &c));
	SHOW("copy result", "%lld", (long long)c.copy);
	pthread_join(th, NULL);
	SHOW("load saw", "%c", seen);
	RET("copy again", ioctl(fd, UFFDIO_COPY, &c));
	SHOW("copy again result", "%lld", (long long)c.copy);

	/* A store, woken once without a page (it faults again), then
	 * resolved by UFFDIO_ZEROPAGE; the thread's id as asked. */
	close(fd);
	fd = uffd(O_NONBLOCK);
	api(fd, UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_EXACT_ADDRESS);
	reg(fd, mem, 4 * PAGE, UFFDIO_REGISTER_MODE_MISSING);
	target = mem + PAGE, offset = 0x123, writes = 1;
	pthread_create(&th, NULL, touch, NULL);
	wait_event(fd);
	RET("read store fault", read(fd, m, sizeof m[0]));
	show_msg("store fault", &m[0], mem + PAGE);
	SHOW("store fault thread", "%d", m[0].arg.pagefault.feat.ptid == (uint32_t)toucher_tid);
	struct uffdio_range w = {(uintptr_t)mem + PAGE, PAGE};
	RET("wake", ioctl(fd, UFFDIO_WAKE, &w));
	wait_event(fd);
	RET("read fault again", read(fd, m, sizeof m[0]));
	show_msg("fault again", &m[0], mem + PAGE);
	struct uffdio_zeropage z = {.range = {(uintptr_t)mem + PAGE, PAGE}, .mode = 2};
	RET("zeropage bad mode", ioctl(fd, UFFDIO_ZEROPAGE, &z));
	z.mode = 0;
	RET("zeropage", ioctl(fd, UFFDIO_ZEROPAGE, &z));
	SHOW("zeropage result", "%lld", (long long)z.zeropage);
	pthread_join(th, NULL);
	SHOW("store saw", "%c", seen);
	SHOW("store rest", "%d %d", mem[PAGE], mem[2 * PAGE - 1]);
	RET("zeropage again", ioctl(fd, UFFDIO_ZEROPAGE, &z));
	SHOW("zeropage again result", "%lld", (long long)z.zeropage);

	/* UFFDIO_MOVE takes the source's page. */
	memset(src, 'M', PAGE);
	target = mem + 2 * PAGE, offset = 7, writes = 0;
	pthread_create(&th, NULL, touch, NULL);
	wait_event(fd);
	read(fd, m, sizeof m[0]);
	struct move mv = {.dst = (uintptr_t)mem + 2 * PAGE, .src = (uintptr_t)src + 1, .len = PAGE};
	RET("move unaligned", ioctl(fd, IOC_MOVE, &mv));
	mv = (struct move){.dst = (uintptr_t)mem + 2 * PAGE, .src = (uintptr_t)mem + 7 * PAGE, .len = PAGE};
	RET("move from hole", ioctl(fd, IOC_MOVE, &mv));
	SHOW("move from hole result", "%lld", (long long)mv.move);
	mv = (struct move){.dst = (uintptr_t)mem + 2 * PAGE, .src = (uintptr_t)src, .len = PAGE};
	RET("move", ioctl(fd, IOC_MOVE, &mv));
	SHOW("move result", "%lld", (long long)mv.move);
	pthread_join(th, NULL);
	SHOW("move saw", "%c", seen);
	SHOW("move source after", "%d", src[0]);

	/* UFFDIO_POISON: the page raises SIGBUS, even unregistered. */
	struct sigaction sa = {.sa_sigaction = on_bus, .sa_flags = SA_SIGINFO};
	sigaction(SIGBUS, &sa, NULL);
	struct poison po = {.range = {(uintptr_t)mem + 3 * PAGE, PAGE}};
	RET("poison", ioctl(fd, IOC_POISON, &po));
	SHOW("poison result", "%lld", (long long)po.updated);
	RET("poison again", ioctl(fd, IOC_POISON, &po));
	RET("unregister", unreg(fd, mem, 4 * PAGE));
	int sig = sigsetjmp(bus_jump, 1);
	if (sig == 0)
		SHOW("poisoned load", "%d", ((volatile char *)mem)[3 * PAGE]);
	else
		SHOW("poisoned load", "signal %d", sig);
	int pfd[2];
	pipe(pfd);
	RET("write from poisoned", write(pfd[1], mem + 3 * PAGE, 1));
	RET("copy after unregister", ioctl(fd, UFFDIO_COPY, &c));

	/* A blocking file; closing it while a thread waits: the thread then
	 * faults on memory no longer registered, and reads zeros. */
	close(fd);
	fd = uffd(0);
	api(fd, 0);
	reg(fd, mem + 4 * PAGE, PAGE, UFFDIO_REGISTER_MODE_MISSING);
	target = mem + 4 * PAGE, offset = 1, writes = 0;
	pthread_create(&th, NULL, touch, NULL);
	RET("blocking read", read(fd, m, sizeof m[0]));
	show_msg("blocking read fault", &m[0], mem + 4 * PAGE);
	close(fd);
	pthread_join(th, NULL);
	SHOW("after close saw", "%d", seen);

	/* A handled signal ends the wait: the handler runs, and the thread
	 * faults again, a new event. */
	fd = uffd(O_NONBLOCK);
	api(fd, 0);
	reg(fd, mem + 5 * PAGE, PAGE, UFFDIO_REGISTER_MODE_MISSING);
	struct sigaction su = {.sa_handler = on_usr1};
	sigaction(SIGUSR1, &su, NULL);
	target = mem + 5 * PAGE, offset = 0, writes = 0;
	pthread_create(&th, NULL, touch, NULL);
	wait_event(fd);
	RET("read before signal", read(fd, m, sizeof m[0]));
	pthread_kill(th, SIGUSR1);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	RET("poll after signal", poll(&p, 1, 5000));
	RET("read after signal", read(fd, m, sizeof m[0]));
	SHOW("handler ran", "%d", usr1_seen);
	memset(src, 'S', PAGE); /* MOVE took the page it had */
	c = (struct uffdio_copy){.dst = (uintptr_t)mem + 5 * PAGE, .src = (uintptr_t)src, .len = PAGE};
	RET("copy after signal", ioctl(fd, UFFDIO_COPY, &c));
	pthread_join(th, NULL);
	SHOW("after signal saw", "%c", seen);
	close(fd);

	/* A thread waiting for a handler that never answers is killable. */
	int ready[2];
	pipe(ready);
	pid_t victim = fork();
	if (victim == 0) {
		fd = uffd(0);
		api(fd, 0);
		reg(fd, mem + 6 * PAGE, PAGE, UFFDIO_REGISTER_MODE_MISSING);
		write(ready[1], "r", 1);
		return ((volatile char *)mem)[6 * PAGE];
	}
	char r1;
	read(ready[0], &r1, 1);
	usleep(100000);
	kill(victim, SIGKILL);
	int status;
	waitpid(victim, &status, 0);
	SHOW("waiting child killed", "%d %d", WIFSIGNALED(status), WTERMSIG(status));

	/* /dev/userfaultfd, in a devtmpfs where /dev has none. */
	if (access("/dev/null", F_OK) != 0) {
		mkdir("/dev", 0755);
		mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	}
	int dev = open("/dev/userfaultfd", O_RDWR);
	SHOW("device opened", "%d", dev >= 0);
	RET("device unknown ioctl", ioctl(dev, _IO(0xaa, 1), 0));
	RET("device bad flags", ioctl(dev, USERFAULTFD_IOC_NEW, 0x100));
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
	SHOW("device made", "%d", fd >= 0);
	RET("device api", api(fd, 0));

	/* Who may: vm.unprivileged_userfaultfd 0 asks CAP_SYS_PTRACE unless
	 * UFFD_USER_MODE_ONLY; 1 asks nothing. */
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	const char *knob = "/proc/sys/vm/unprivileged_userfaultfd";
	show_file("unprivileged_userfaultfd", knob);
	put_file("unprivileged_userfaultfd 2", knob, "2");
	for (int on = 0; on < 2; on++) {
		if (on)
			put_file("unprivileged_userfaultfd 1", knob, "1");
		pid_t child = fork();
		if (child == 0) {
			setuid(65534);
			RET(on ? "unprivileged, allowed" : "unprivileged", uffd(0) >= 0 ? 0 : -1);
			RET(on ? "unprivileged user mode only, allowed" : "unprivileged user mode only", uffd(UFFD_USER_MODE_ONLY) >= 0 ? 0 : -1);
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
	put_file("unprivileged_userfaultfd 0", knob, "0");
	return 0;
}
