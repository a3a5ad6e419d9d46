/* Run as /init by tests/kernel_test.go: it writes through a null pointer;
 * the kernel must kill it with SIGSEGV and stay up. */
#include <stdio.h>

int main(void) {
	printf("about to fault\n");
	fflush(stdout);
	int *volatile null = (int *)8;
	*null = 1;
	printf("still alive: the fault was not caught\n");
	return 0;
}
