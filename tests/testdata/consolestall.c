/* consolestall: /init for tests/tty_test.go TestConsoleWriteLeavesOthersRunning.
 * One child writes 2 MiB to the console in one write(2), seconds at the
 * UART's pace; another only computes and reads CLOCK_MONOTONIC in a loop,
 * recording the longest gap between two reads. On Linux a console write
 * is preemptible: the reader keeps running, its longest gap a scheduler
 * slice or so.
 *
 * The machine running QEMU is shared, and the host stalls the guest too
 * (QEMU's threads wait for a processor). So the reader goes on for as
 * long again once the write is done: the longest gap of that second
 * period, with no writer, is what the host alone did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE (2ul << 20)

enum { BEFORE, WRITING, AFTER, PHASES };

struct shared {
	volatile int started, phase, done;
	volatile long write_ns;
	/* per phase: the longest gap between two reads in it, gaps over 50 ms */
	volatile long longest_ns[PHASES], over_50ms[PHASES];
};

static long ns(const struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

static long now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return ns(&t);
}

/* reader computes and reads the clock until the parent says done; a gap
 * counts in a phase when both its reads are in it. */
static void reader(struct shared *s) {
	volatile unsigned long sum = 0;
	long prev = now_ns();
	int prev_phase = s->phase;
	s->started = 1;
	while (!s->done) {
		for (int i = 0; i < 1000; i++)
			sum += i * i;
		long now = now_ns();
		int phase = s->phase;
		long gap = now - prev;
		if (phase == prev_phase) {
			if (gap > s->longest_ns[phase])
				s->longest_ns[phase] = gap;
			if (gap > 50000000L)
				s->over_50ms[phase]++;
		}
		prev_phase = phase;
		prev = now;
	}
	_exit(0);
}

int main(void) {
	struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) {
		perror("consolestall: mmap");
		return 1;
	}
	pid_t r = fork();
	if (r == 0)
		reader(s);
	while (!s->started)
		usleep(1000);
	pid_t w = fork();
	if (w == 0) {
		char *buf = malloc(SIZE);
		for (unsigned long i = 0; i < SIZE; i++)
			buf[i] = i % 64 == 63 ? '\n' : '.';
		long start = now_ns();
		s->phase = WRITING;
		ssize_t n = write(1, buf, SIZE);
		s->phase = AFTER;
		s->write_ns = now_ns() - start;
		_exit(n == (ssize_t)SIZE ? 0 : 1);
	}
	int status = 0;
	waitpid(w, &status, 0);
	s->phase = AFTER;
	struct timespec as_long = {s->write_ns / 1000000000L, s->write_ns % 1000000000L};
	nanosleep(&as_long, NULL);
	s->done = 1;
	waitpid(r, NULL, 0);
	printf("\nconsolestall: writer exit %d, its write took %ld ms; the reader's longest gap while it wrote %ld us "
	       "(%ld over 50 ms), as long after it %ld us (%ld over 50 ms)\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1, s->write_ns / 1000000, s->longest_ns[WRITING] / 1000,
	       s->over_50ms[WRITING], s->longest_ns[AFTER] / 1000, s->over_50ms[AFTER]);
	return 0;
}
