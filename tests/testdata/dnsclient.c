/* A DNS lookup through glibc's stub resolver over UDP to the test's own
 * name server, whose address and port the file "dnsserver" in the current
 * directory gives: 127.0.0.1 under qemu-riscv64 on the host, 10.0.2.2 (the
 * host's loopback through QEMU's user network) on the kernel. */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdio.h>
#include <string.h>

static void lookup(const char *name) {
	unsigned char ans[512];
	h_errno = 0;
	int n = res_query(name, C_IN, T_A, ans, sizeof ans);
	if (n < 0) {
		printf("%s: -1 h_errno %d\n", name, h_errno);
		return;
	}
	/* The single answer's address is the last four bytes. */
	printf("%s: %d bytes, %d answer, rcode %d, %d.%d.%d.%d\n", name, n, ans[6] << 8 | ans[7], ans[3] & 15,
	       ans[n - 4], ans[n - 3], ans[n - 2], ans[n - 1]);
}

int main(void) {
	char ip[32];
	int port;
	FILE *f = fopen("dnsserver", "r");
	if (f == NULL || fscanf(f, "%31s %d", ip, &port) != 2) {
		printf("no dnsserver file\n");
		return 1;
	}
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	res_init();
	_res.options = RES_INIT | RES_RECURSE | RES_DEFNAMES | RES_DNSRCH;
	_res.nscount = 1;
	_res.nsaddr_list[0] = a;
	_res.retrans = 5;
	_res.retry = 2;
	lookup("jiege.test");
	lookup("missing.test");
	lookup("jiege.test");
	return 0;
}
