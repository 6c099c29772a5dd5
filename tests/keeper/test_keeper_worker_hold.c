/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loop's worker wakes wait for its reply (kr_keeper_worker_hold): a
 * wake asked for while held makes no write until the release, which makes
 * exactly one however many were asked; a release with none asked makes
 * none; another thread's wake is made at once even while the loop holds.
 * Unit test on the worker's eventfd (no keeper, no worker thread).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "keeper/keeper.h"
#include "kr_test.h"

/* The eventfd's count since the last look: the writes made (0: none). */
static uint64_t writes(int fd)
{
	uint64_t n = 0;

	if (read(fd, &n, sizeof(n)) != sizeof(n)) {
		CHECK_EQ(errno, EAGAIN);
		return 0;
	}
	return n;
}

static void *other_thread_wakes(void *arg)
{
	kr_keeper_worker_wake(arg);
	return NULL;
}

int main(void)
{
	struct kr_keeper *k = calloc(1, sizeof(*k));
	pthread_t th;

	CHECK(k != NULL);
	k->work_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(k->work_fd >= 0);

	kr_keeper_worker_wake(k); /* not held: at once */
	CHECK_EQ(writes(k->work_fd), 1);

	kr_keeper_worker_hold();
	kr_keeper_worker_wake(k);
	kr_keeper_worker_wake(k);
	CHECK_EQ(writes(k->work_fd), 0); /* the reply is not out yet */
	/* another thread (the worker itself, say) is not held by the loop */
	CHECK_OK(pthread_create(&th, NULL, other_thread_wakes, k));
	CHECK_OK(pthread_join(th, NULL));
	CHECK_EQ(writes(k->work_fd), 1);
	kr_keeper_worker_release(k);
	CHECK_EQ(writes(k->work_fd), 1); /* one for the two asked */

	kr_keeper_worker_hold();
	kr_keeper_worker_release(k);
	CHECK_EQ(writes(k->work_fd), 0); /* none asked, none made */
	kr_keeper_worker_wake(k);	 /* released: at once again */
	CHECK_EQ(writes(k->work_fd), 1);

	close(k->work_fd);
	free(k);
	KR_PASS("keeper_worker_hold");
}
