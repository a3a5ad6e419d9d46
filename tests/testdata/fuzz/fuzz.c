/* A system call fuzzer run as init (tests/fuzz_test.go): argv gives a seed
 * and a number of calls. A child process issues seeded random system calls
 * with arguments drawn by kind (descriptors live and closed, pointers to
 * mapped, read-only, unmapped and kernel memory, sizes near page and power
 * of two boundaries, random flags); the parent restarts it when it dies
 * and kills it when it hangs. Before each call the child records it in
 * shared memory, so the call that killed a child (SIGKILL is what the
 * kernel sends when a handler has a bug) can be printed with its seed. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct record {
	uint64_t seed, index, nr, args[6];
};

static uint64_t state;

static uint64_t next(void) {
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static uint64_t pick(const uint64_t *v, int n) { return v[next() % n]; }

static char *scratch; /* 16 pages read-write */
static char *rodata;  /* a read-only page */

static uint64_t arg(void) {
	static const uint64_t sizes[] = {0, 1, 7, 8, 16, 4095, 4096, 4097, 65536, 1u << 31, (1ull << 31) - 1,
					 1ull << 32, (1ull << 32) + 1, 1ull << 63, UINT64_MAX, UINT64_MAX - 4095, 0x7ffff000};
	static const uint64_t fds[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 63, 64, 1023, 1024, (uint64_t)-1,
				       (uint64_t)-100, 1u << 31};
	switch (next() % 8) {
	case 0:
		return pick(sizes, sizeof sizes / 8);
	case 1:
		return pick(fds, sizeof fds / 8);
	case 2:
		return (uint64_t)(scratch + (next() % (16 * 4096 - 256)));
	case 3: {
		const uint64_t ptrs[] = {0, 8, 0x1000, 0x80000000, 0x80010000, 0x3fffffffff, 0x4000000000,
					 (uint64_t)rodata, (uint64_t)scratch + 16 * 4096 - 1, 0xffffffffffff0000};
		return pick(ptrs, sizeof ptrs / 8);
	}
	case 4:
		return next() % 64;
	case 5:
		return 1ull << (next() % 64);
	case 6:
		return next() & 0xffffffff;
	default:
		return next();
	}
}

/* Calls left out: those that end or replace the child (exit, execve,
 * rt_sigreturn), that would fork without bound (clone, clone3), that
 * signal other processes (kill, tkill, tgkill, rt_tgsigqueueinfo,
 * rt_sigqueueinfo, pidfd_send_signal) or the machine (reboot). */
static int left_out(uint64_t nr) {
	switch (nr) {
	case SYS_exit:
	case SYS_exit_group:
	case SYS_execve:
	case SYS_execveat:
	case SYS_rt_sigreturn:
	case SYS_clone:
	case SYS_clone3:
	case SYS_kill:
	case SYS_tkill:
	case SYS_tgkill:
	case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
	case SYS_pidfd_send_signal:
	case SYS_reboot:
		return 1;
	}
	return 0;
}

static void child(struct record *rec, uint64_t from, uint64_t to) {
	scratch = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rodata = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (uint64_t i = from; i < to; i++) {
		state = rec->seed ^ (i * 0x9e3779b97f4a7c15ull) ^ 1;
		uint64_t nr;
		do
			nr = next() % 460;
		while (left_out(nr));
		uint64_t a[6];
		for (int k = 0; k < 6; k++)
			a[k] = arg();
		rec->index = i;
		rec->nr = nr;
		memcpy(rec->args, a, sizeof a);
		syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	rec->index = to;
	_exit(0);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: fuzz SEED CALLS\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 0), calls = strtoull(argv[2], NULL, 0);
	struct record *rec = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t done = 0, children = 0, crashed = 0, hung = 0, bugs = 0;
	while (done < calls) {
		rec->index = done;
		rec->seed = seed;
		pid_t pid = fork();
		if (pid < 0) {
			printf("fuzz: fork failed\n");
			return 1;
		}
		if (pid == 0)
			child(rec, done, calls);
		children++;
		int status = 0, waited = 0, killed = 0;
		struct timespec tick = {0, 20 * 1000000};
		uint64_t last = rec->index;
		while (waitpid(pid, &status, WNOHANG) == 0) {
			nanosleep(&tick, NULL);
			if (rec->index != last) {
				last = rec->index;
				waited = 0;
			} else if (++waited == 25) { /* one call for 0.5 s: hung */
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				hung++;
				killed = 1;
				break;
			}
		}
		if (killed) {
			/* counted as hung */
		} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			bugs++;
			printf("fuzz: seed %llu call %llu killed its process: syscall(%llu, %#llx, %#llx, %#llx, %#llx, %#llx, %#llx)\n",
			       (unsigned long long)seed, (unsigned long long)rec->index, (unsigned long long)rec->nr,
			       (unsigned long long)rec->args[0], (unsigned long long)rec->args[1],
			       (unsigned long long)rec->args[2], (unsigned long long)rec->args[3],
			       (unsigned long long)rec->args[4], (unsigned long long)rec->args[5]);
		} else if (WIFSIGNALED(status)) {
			crashed++;
		}
		done = rec->index + 1;
	}
	printf("fuzz: seed %llu: %llu calls, %llu processes (%llu ended by a signal, %llu hung and killed, %llu killed by the kernel)\n",
	       (unsigned long long)seed, (unsigned long long)calls, (unsigned long long)children,
	       (unsigned long long)crashed, (unsigned long long)hung, (unsigned long long)bugs);
	return bugs ? 1 : 0;
}
