/* Code written at run time: a program writes instructions, announces
 * them with __builtin___clear_cache (glibc's __riscv_flush_icache, the
 * riscv_flush_icache system call) and runs them: in an anonymous
 * executable page, rewritten in place, by another thread that was
 * running meanwhile (on another hart when there are several), written
 * to a page that mprotect then makes executable, and loaded from a file
 * mapped executable while that thread runs. */
#include "../conform.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/cachectl.h>
#include <sys/mman.h>

#define PG 4096

/* emit writes "li a0, value; ret" at p. */
static void emit(uint32_t *p, int value) {
	p[0] = 0x00000513 | (uint32_t)value << 20; /* addi a0, zero, value */
	p[1] = 0x00008067;                         /* jalr zero, 0(ra) */
}

static void publish(uint32_t *p) { __builtin___clear_cache((char *)p, (char *)(p + 2)); }

static int (*_Atomic code)(void);
static atomic_int asked, answered, result;

/* runner spins in user mode until asked, then calls code and answers. */
static void *runner(void *arg) {
	(void)arg;
	for (int done = 0; done < 3; done++) {
		while (atomic_load(&asked) == done)
			;
		atomic_store(&result, code());
		atomic_store(&answered, done + 1);
	}
	return NULL;
}

static int ask(int n) {
	atomic_store(&asked, n);
	while (atomic_load(&answered) != n)
		;
	return atomic_load(&result);
}

int main(void) {
	char buf[64];
	RET("flush", __riscv_flush_icache(buf, buf + sizeof buf, 0));
	RET("flush.local", __riscv_flush_icache(buf, buf + sizeof buf, 1 /* SYS_RISCV_FLUSH_ICACHE_LOCAL */));

	uint32_t *rwx = mmap(NULL, PG, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	emit(rwx, 42);
	publish(rwx);
	code = (int (*)(void))rwx;
	SHOW("anon.call", "%d", code());
	emit(rwx, 7);
	publish(rwx);
	SHOW("anon.rewritten", "%d", code());

	pthread_t th;
	pthread_create(&th, NULL, runner, NULL);
	emit(rwx, 99);
	publish(rwx);
	SHOW("thread.call", "%d", ask(1));

	uint32_t *wx = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	emit(wx, 5);
	RET("mprotect.rx", mprotect(wx, PG, PROT_READ | PROT_EXEC));
	publish(wx);
	code = (int (*)(void))wx;
	SHOW("mprotect.call", "%d", code());
	SHOW("mprotect.thread.call", "%d", ask(2));

	uint32_t words[2 * 8];
	for (int i = 0; i < 8; i++)
		emit(words + 2 * i, 10 + i);
	int fd = open("jit.code", O_RDWR | O_CREAT | O_TRUNC, 0600);
	write(fd, words, sizeof words);
	uint32_t *file = mmap(NULL, PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	SHOW("file.mapped", "%d", file != MAP_FAILED);
	code = (int (*)(void))(file + 2 * 3);
	SHOW("file.thread.call", "%d", ask(3));
	code = (int (*)(void))(file + 2 * 6);
	SHOW("file.call", "%d", code());
	pthread_join(th, NULL);
	close(fd);
	unlink("jit.code");
	return 0;
}
