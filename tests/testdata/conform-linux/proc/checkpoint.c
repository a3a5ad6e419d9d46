/* What checkpoint/restore tools use (CONFIG_CHECKPOINT_RESTORE):
 * /proc/PID/map_files (a link per file mapping, to the file even once
 * unlinked), clone3's set_tid and its errors, TFD_IOC_SET_TICKS on a
 * timerfd, prctl(PR_SET_MM) field by field and whole (PR_SET_MM_MAP),
 * with their errors, the break it moves, /proc/PID/auxv, and the
 * executable /proc/PID/exe names (PR_SET_MM_EXE_FILE). */
#include "../../conform/conform.h"
#include <dirent.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <elf.h>

#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)

struct prctl_mm_map_ {
	uint64_t start_code, end_code, start_data, end_data, start_brk, brk, start_stack, arg_start, arg_end,
	    env_start, env_end, auxv;
	uint32_t auxv_size, exe_fd;
};

static long clone3_tid(pid_t tid, size_t n) {
	struct clone_args args = {.exit_signal = SIGCHLD, .set_tid = (uint64_t)(uintptr_t)&tid, .set_tid_size = n};
	long r = syscall(SYS_clone3, &args, sizeof args);
	if (r == 0)
		_exit(getpid() == tid ? 7 : 1);
	return r;
}

static void show_clone(const char *name, pid_t tid, size_t n) {
	errno = 0;
	long r = clone3_tid(tid, n);
	if (r < 0) {
		SHOW(name, "-1 %s", strerrorname_np(errno));
		return;
	}
	int status;
	waitpid(r, &status, 0);
	SHOW(name, "pid=%d exit %d", r == tid, WEXITSTATUS(status));
}

int main(void) {
	mkdir("/proc", 0555);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/mnt", 0755);
	mount("tmpfs", "/mnt", "tmpfs", 0, NULL);

	/* map_files */
	int fd = open("/mnt/file", O_RDWR | O_CREAT, 0644);
	write(fd, "contents", 8);
	char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	unlink("/mnt/file");
	char link[64], target[256] = "";
	snprintf(link, sizeof link, "/proc/self/map_files/%lx-%lx", (unsigned long)p, (unsigned long)p + 4096);
	RET("map_files.readlink", readlink(link, target, sizeof target - 1));
	SHOW("map_files.target", "%s", target);
	fd = open(link, O_RDONLY);
	char buf[16] = "";
	RET("map_files.read", read(fd, buf, sizeof buf - 1));
	SHOW("map_files.contents", "%s", buf);
	close(fd);
	int entries = 0;
	DIR *d = opendir("/proc/self/map_files");
	for (struct dirent *e; d && (e = readdir(d));)
		entries += strcmp(e->d_name, link + strlen("/proc/self/map_files/")) == 0;
	SHOW("map_files.listed", "%d", entries);
	RET("map_files.anon", open("/proc/self/map_files/1000-2000", O_RDONLY));

	/* set_tid */
	show_clone("set_tid.free", 4321, 1);
	show_clone("set_tid.taken", getpid(), 1);
	show_clone("set_tid.zero", 0, 1);
	show_clone("set_tid.big", 1 << 22, 1);
	show_clone("set_tid.two", 4322, 2);
	{
		struct clone_args args = {.exit_signal = SIGCHLD, .set_tid_size = 1};
		RET("set_tid.null", syscall(SYS_clone3, &args, sizeof args));
	}
	pid_t pid = fork();
	if (pid == 0) {
		setuid(65534);
		show_clone("set_tid.unprivileged", 4323, 1);
		_exit(0);
	}
	waitpid(pid, NULL, 0);

	/* TFD_IOC_SET_TICKS */
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	uint64_t ticks = 5, got = 0;
	RET("set_ticks", ioctl(tfd, TFD_IOC_SET_TICKS, &ticks));
	RET("set_ticks.read", read(tfd, &got, sizeof got));
	SHOW("set_ticks.count", "%llu", (unsigned long long)got);
	ticks = 0;
	RET("set_ticks.zero", ioctl(tfd, TFD_IOC_SET_TICKS, &ticks));
	RET("set_ticks.fault", ioctl(tfd, TFD_IOC_SET_TICKS, (void *)8));
	RET("set_ticks.other", ioctl(tfd, _IOW('T', 1, uint64_t), &ticks));

	/* PR_SET_MM */
	unsigned int size = 0;
	RET("mm.map_size", prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0));
	SHOW("mm.map_size.value", "%u", size);
	RET("mm.arg5", prctl(PR_SET_MM, PR_SET_MM_START_CODE, 0x10000, 0, 1));
	RET("mm.arg4", prctl(PR_SET_MM, PR_SET_MM_START_CODE, 0x10000, 1, 0));
	RET("mm.bad.option", prctl(PR_SET_MM, 99, 0x10000, 0, 0));
	RET("mm.low.addr", prctl(PR_SET_MM, PR_SET_MM_START_CODE, 0x100, 0, 0));
	RET("mm.high.addr", prctl(PR_SET_MM, PR_SET_MM_START_CODE, -4096L, 0, 0));
	RET("mm.end_code.below.start", prctl(PR_SET_MM, PR_SET_MM_END_CODE, 0x10000, 0, 0));
	free(malloc(1)); /* malloc's break is set before we read it */
	char *brk0 = (char *)syscall(SYS_brk, 0);
	RET("mm.brk", prctl(PR_SET_MM, PR_SET_MM_BRK, (unsigned long)brk0 + 8192, 0, 0));
	SHOW("mm.brk.moved", "%ld", (long)((char *)syscall(SYS_brk, 0) - brk0));
	RET("mm.brk.back", prctl(PR_SET_MM, PR_SET_MM_BRK, (unsigned long)brk0, 0, 0));
	RET("mm.start_brk.above.brk", prctl(PR_SET_MM, PR_SET_MM_START_BRK, (unsigned long)brk0 + 4096, 0, 0));
	unsigned long stack_addr = (unsigned long)&size;
	RET("mm.start_stack", prctl(PR_SET_MM, PR_SET_MM_START_STACK, stack_addr, 0, 0));

	uint64_t auxv[4] = {AT_PAGESZ, 4096, AT_NULL, 0};
	RET("mm.auxv", prctl(PR_SET_MM, PR_SET_MM_AUXV, auxv, sizeof auxv, 0));
	RET("mm.auxv.big", prctl(PR_SET_MM, PR_SET_MM_AUXV, auxv, 4096, 0));
	RET("mm.auxv.fault", prctl(PR_SET_MM, PR_SET_MM_AUXV, 8, 32, 0));
	int afd = open("/proc/self/auxv", O_RDONLY);
	uint64_t back[8] = {0};
	RET("auxv.read", read(afd, back, sizeof back));
	SHOW("auxv.first", "%llu %llu", (unsigned long long)back[0], (unsigned long long)back[1]);
	close(afd);

	struct prctl_mm_map_ map = {0};
	RET("mm.map.size", prctl(PR_SET_MM, PR_SET_MM_MAP, &map, 100, 0));
	RET("mm.map.zero", prctl(PR_SET_MM, PR_SET_MM_MAP, &map, sizeof map, 0));
	RET("mm.map.fault", prctl(PR_SET_MM, PR_SET_MM_MAP, 8, sizeof map, 0));

	/* EXE_FILE: the running executable is still mapped. */
	int exe = open("/proc/self/exe", O_RDONLY);
	RET("mm.exe.busy", prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, exe, 0, 0));
	int dir = open("/mnt", O_RDONLY);
	RET("mm.exe.dir", prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, dir, 0, 0));
	RET("mm.exe.badfd", prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, 999, 0, 0));

	pid = fork();
	if (pid == 0) {
		setuid(65534);
		RET("mm.unprivileged", prctl(PR_SET_MM, PR_SET_MM_START_CODE, 0x10000, 0, 0));
		RET("mm.unprivileged.map_size", prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
