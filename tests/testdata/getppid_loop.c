// getppid_loop makes CALLS getppid system calls, then exits: a program
// whose user instructions are known, four a call (li, ecall; addi, bnez:
// the ecall ends one translation block, the return starts the next), for
// the icount test.
#include <sys/syscall.h>

int main(void) {
	long n = CALLS;
	if (n > 0)
		__asm__ volatile("1: li a7, %1\n"
				 "ecall\n"
				 "addi %0, %0, -1\n"
				 "bnez %0, 1b\n"
				 : "+r"(n)
				 : "i"(__NR_getppid)
				 : "a0", "a7", "memory");
	return 0;
}
