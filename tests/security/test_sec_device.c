/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_device: a job reaches one UAR page of the device, nothing else. A job
 * of uid 65534 (its own tenant) attaches by hand and checks what it was
 * sent: besides the pages of its regions exactly one descriptor, a sealed
 * one-page memfd named after a UAR (not the device's segment, which holds
 * every tenant's tables); it cannot shrink or grow it. Then it writes random
 * and boundary values over the whole page and rings it thousands of times
 * while a root job keeps WRITing and READing through a DCI: the root job's
 * bytes stay right and the keeper keeps serving.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

#define PAGE  4096u
#define BURST 2000u

static struct kp_keeper K;

/* Write pattern k over the page and ring it (wake whoever waits on any word). */
static void scribble(uint8_t *page, unsigned int k, uint64_t *seed)
{
	switch (k % 4) {
	case 0:
		for (uint32_t i = 0; i < PAGE; i += 8) {
			uint64_t v = sec_rnd(seed);

			memcpy(page + i, &v, 8);
		}
		break;
	case 1:
		memset(page, 0xff, PAGE);
		break;
	case 2:
		memset(page, 0, PAGE);
		break;
	default:
		for (uint32_t i = 0; i < PAGE; i += 4)
			memcpy(page + i, &(uint32_t){0x80000000u + i}, 4);
	}
	for (uint32_t i = 0; i < PAGE; i += 4)
		syscall(SYS_futex, (uint32_t *)(page + i), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int nobody_job(void *arg)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0, others = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	char path[40], link[128];
	struct stat st;
	uint8_t *page;
	ssize_t n;
	int fd, uar;

	(void)arg;
	SEC_EXPECT(rep != NULL);
	fd = sec_attach_raw(K.sock, rep, fds, &nfds, 0);
	SEC_EXPECT(fd >= 0);
	SEC_EXPECT(rep->tenant != 0); /* root's tenant is another */
	for (unsigned int i = 0; i < nfds; i++) {
		bool region = false;

		for (uint32_t r = 0; r < rep->nregions; r++)
			region |= rep->region[r].fd_index == i;
		others += !region;
	}
	SEC_EXPECT(others == 1 && rep->uar_fd_index < nfds);
	uar = fds[rep->uar_fd_index];

	/* one sealed page, named after a UAR */
	SEC_EXPECT(fstat(uar, &st) == 0 && st.st_size == PAGE);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", uar);
	n = readlink(path, link, sizeof(link) - 1);
	SEC_EXPECT(n > 0);
	link[n] = 0;
	SEC_EXPECT(strstr(link, "memfd:krsim:") && strstr(link, ":uar"));
	SEC_EXPECT((fcntl(uar, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) ==
		   (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
	SEC_EXPECT(ftruncate(uar, 0) == -1 && errno == EPERM);
	SEC_EXPECT(ftruncate(uar, 1 << 20) == -1 && errno == EPERM);

	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, uar, 0);
	SEC_EXPECT(page != MAP_FAILED);
	for (unsigned int k = 0; k < BURST; k++)
		scribble(page, k, &seed);
	munmap(page, PAGE);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	close(fd);
	free(rep);
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "2",	     "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct sec_victim v;

	sec_keeper_start(&K, args);
	sec_victim_start(&v, &K);
	sec_victim_round(&v, 10);
	/* the root job keeps its traffic going while the attacker scribbles */
	CHECK_EQ(sec_victim_until_exit(&v, sec_spawn_nobody(nobody_job, NULL)), 0);
	sec_victim_round(&v, 10);
	printf("root job: %u rounds of WRITE+READ verified while uid %u scribbled its UAR page\n",
	       v.rounds, SEC_UID);
	sec_victim_stop(&v);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_device");
}
