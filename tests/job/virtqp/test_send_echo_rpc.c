/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/echo_rpc run as a user runs it, against a keeper on the sim: its
 * server and client jobs exchange 2,000 requests and answers, each answer
 * checked by the client; the example exits 0 only when all matched.
 * Usage: test_send_echo_rpc PATH_TO_ECHO_RPC
 */
#include <signal.h>
#include <string.h>

#include "vq_fixture.h"

int main(int argc, char **argv)
{
	const char *args[] = {"--tenants", "1", "--dcis", "4", NULL};
	struct kp_keeper k;
	char out[512];
	int rc;

	CHECK(argc == 2);
	signal(SIGPIPE, SIG_IGN);
	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	{
		const char *argv2[] = {argv[1], "--socket", k.sock, "-n", "2000", NULL};

		rc = kp_run(argv2, out, sizeof(out), 60);
	}
	printf("%s", out);
	CHECK_EQ(rc, 0);
	CHECK(strstr(out, "2000 requests") != NULL);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	printf("PASS: test_send_echo_rpc\n");
	return 0;
}
