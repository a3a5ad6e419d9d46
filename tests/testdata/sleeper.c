/* An init that sleeps, a second at a time, for ever: the profiler's idle
 * test samples a hart with nothing to run. */
#include <unistd.h>

int main(void) {
	for (;;)
		sleep(1);
}
