/* User mode reads the time CSR directly (rdtime), as Go's runtime and
 * vDSO-less clocks do: no trap, and it advances. */
#include "../conform.h"
#include <time.h>

static unsigned long rdtime(void) {
	unsigned long t;
	__asm__ volatile("rdtime %0" : "=r"(t));
	return t;
}

int main(void) {
	unsigned long a = rdtime(), b = rdtime();
	SHOW("rdtime.readable", "%d", 1);
	SHOW("rdtime.nondecreasing", "%d", b >= a);
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	unsigned long c = rdtime();
	SHOW("rdtime.advances.across.sleep", "%d", c > b);
	int increasing = 1;
	for (int i = 0; i < 1000; i++) {
		unsigned long n = rdtime();
		increasing &= n >= c;
		c = n;
	}
	SHOW("rdtime.nondecreasing.1000", "%d", increasing);
	return 0;
}
