/* cpus prints the processor count as a program sees it three ways: glibc's
 * sysconf (which reads /sys/devices/system/cpu/online), the affinity mask
 * (what nginx's worker_processes auto counts) and the sysfs file itself;
 * then runs one busy thread per processor and reports that all finished. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

static void *spin(void *arg) {
	volatile unsigned long n = 0;
	for (int i = 0; i < 20000000; i++)
		n += i;
	return (void *)n;
}

int main(void) {
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) != 0) {
		perror("sched_getaffinity");
		return 1;
	}
	char online[64] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (f == NULL || fgets(online, sizeof online, f) == NULL) {
		perror("/sys/devices/system/cpu/online");
		return 1;
	}
	fclose(f);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	printf("cpus: sysconf %ld affinity %d online %s", n, CPU_COUNT(&set), online);
	pthread_t t[64];
	for (long i = 0; i < n && i < 64; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	for (long i = 0; i < n && i < 64; i++)
		pthread_join(t[i], NULL);
	printf("cpus: %ld threads done\n", n);
	return 0;
}
