/* SPDX-License-Identifier: BSD-3-Clause */
/* Security test helpers: see sec_fixture.h. */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

void sec_require_root(void)
{
	if (geteuid() != 0)
		KR_SKIP("needs root: attackers are children dropped to uid %u", SEC_UID);
}

void sec_drop(void)
{
	if (setgroups(0, NULL) || setresgid(SEC_GID, SEC_GID, SEC_GID) ||
	    setresuid(SEC_UID, SEC_UID, SEC_UID) || geteuid() != SEC_UID) {
		perror("sec_drop");
		_exit(1);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

int sec_as_nobody(int (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		sec_drop();
		fflush(stdout);
		_exit(fn(arg));
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
