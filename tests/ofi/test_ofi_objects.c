/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider's objects through libfabric (FI_PROVIDER_PATH=the build,
 * FI_PROVIDER=krcore), against a keeper on a sim host:
 *   getinfo   hints Open MPI's mtl/ofi gives (tagged, directed receive, SAS
 *             order, AV_MAP, API 1.5, FI_CONTEXT modes) match; hints it
 *             cannot meet (FI_RMA_EVENT, a MSG endpoint, a foreign provider name,
 *             8 bytes of CQ data) get -FI_ENODATA
 *   domain    opening one attaches this process to the keeper (the pool
 *             segment shows a job with our pid); a second shares the
 *             attach; the last close detaches
 *   av        TABLE and MAP: addresses in, fi_addr_t out in order; one that
 *             names no node is refused (FI_ADDR_NOTAVAIL) and not counted;
 *             lookup (short buffer: the full size told), straddr, remove
 *             (its fi_addr then unknown, never reused); bad flags, shared
 *             AVs and FI_EVENT refused; a domain with an AV open will not
 *             close (-FI_EBUSY)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "job/job.h"
#include "kr_test.h"
#include "ofi/ofi.h"
#include "pool_fixture.h"

static struct kp_keeper K;

static struct fi_info *hints_ompi(void)
{
	struct fi_info *h = fi_allocinfo();

	CHECK(h != NULL);
	h->caps = FI_TAGGED | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_DIRECTED_RECV;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	h->tx_attr->op_flags = FI_COMPLETION;
	h->domain_attr->av_type = FI_AV_MAP;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->domain_attr->cq_data_size = 4;
	h->fabric_attr->prov_name = strdup(KR_OFI_NAME);
	return h;
}

static void test_getinfo(struct fi_info **out)
{
	struct fi_info *h = hints_ompi(), *i = NULL;

	CHECK_OK(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, h, &i));
	CHECK(i != NULL);
	CHECK(!strcmp(i->fabric_attr->prov_name, KR_OFI_NAME));
	CHECK_EQ(i->ep_attr->type, FI_EP_RDM);
	CHECK_EQ(i->caps & h->caps, h->caps);
	CHECK_EQ(i->mode, FI_CONTEXT | FI_CONTEXT2);
	CHECK_EQ(i->tx_attr->msg_order & FI_ORDER_SAS, FI_ORDER_SAS);
	CHECK_EQ(i->domain_attr->av_type, FI_AV_MAP);
	CHECK(i->domain_attr->cq_data_size >= 4);
	CHECK_EQ(i->domain_attr->mr_mode, 0);
	*out = i;

	/* what it cannot do: nothing offered */
	h->caps |= FI_RMA_EVENT;
	CHECK_EQ(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, h, &i), -FI_ENODATA);
	h->caps &= ~FI_RMA_EVENT;
	h->ep_attr->type = FI_EP_MSG;
	CHECK_EQ(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, h, &i), -FI_ENODATA);
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->cq_data_size = 8;
	CHECK_EQ(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, h, &i), -FI_ENODATA);
	h->domain_attr->cq_data_size = 4;
	/* no FI_CONTEXT offered: the provider asks for none */
	h->mode = 0;
	CHECK_OK(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, h, &i));
	CHECK_EQ(i->mode, 0);
	fi_freeinfo(i);
	fi_freeinfo(h);
}

/* Jobs attached at the keeper with our pid (from the pool segment, as krctl reads it). */
static uint32_t my_jobs(void)
{
	struct kr_ctx *obs = kr_job_observe(K.sock);
	uint32_t n = 0;

	CHECK(obs != NULL);
	for (uint32_t j = 0; j < obs->seg->ntenants * obs->seg->jobs; j++) {
		const struct kr_pool_job *job = kr_seg_job(obs->seg, j);

		n += job->state == KR_JOB_ATTACHED && job->pid == getpid();
	}
	kr_detach(obs);
	return n;
}

static void test_av(struct fid_domain *dom, enum fi_av_type type)
{
	struct fi_av_attr attr = {.type = type, .count = 2};
	struct kr_ofi_addr in[3] = {{.node = 7, .port = 100, .launch_tag = 0x1234},
				    {.node = 0, .port = 101, .launch_tag = 0x1234}, /* no node */
				    {.node = 9, .port = 102, .launch_tag = 0x1234}};
	struct kr_ofi_addr got;
	fi_addr_t fa[3];
	struct fid_av *av;
	char s[96];
	size_t len;

	CHECK_OK(fi_av_open(dom, &attr, &av, NULL));
	CHECK_EQ(fi_av_insert(av, in, 3, fa, 0, NULL), 2);
	CHECK(fa[0] != FI_ADDR_NOTAVAIL && fa[2] != FI_ADDR_NOTAVAIL && fa[0] != fa[2]);
	CHECK_EQ(fa[1], FI_ADDR_NOTAVAIL);
	len = sizeof(got);
	CHECK_OK(fi_av_lookup(av, fa[2], &got, &len));
	CHECK_EQ(len, sizeof(got));
	CHECK(!memcmp(&got, &in[2], sizeof(got)));
	len = 4; /* short: a part copied, the full size told */
	memset(&got, 0, sizeof(got));
	CHECK_OK(fi_av_lookup(av, fa[0], &got, &len));
	CHECK_EQ(len, sizeof(got));
	CHECK_EQ(got.node, 7);
	CHECK_EQ(got.port, 0);
	len = sizeof(s);
	CHECK(fi_av_straddr(av, &in[0], s, &len) == s);
	CHECK(!strcmp(s, "fi_addr_krcore://7:100/0000000000001234"));
	CHECK_OK(fi_av_remove(av, &fa[0], 1, 0));
	len = sizeof(got);
	CHECK_EQ(fi_av_lookup(av, fa[0], &got, &len), -FI_EINVAL);
	CHECK_EQ(fi_av_remove(av, &fa[0], 1, 0), -FI_EINVAL); /* twice */
	CHECK_EQ(fi_av_insert(av, &in[0], 1, fa, 0, NULL), 1);
	CHECK(fa[0] != 0); /* a removed index is not reused */
	CHECK_EQ(fi_av_insert(av, in, 1, fa, FI_MULTICAST, NULL), -FI_EINVAL);
	CHECK_EQ(fi_av_insertsvc(av, "node1", "100", fa, 0, NULL), -FI_ENOSYS);
	/* the domain holds the AV: it will not close under it */
	CHECK_EQ(fi_close(&dom->fid), -FI_EBUSY);
	CHECK_OK(fi_close(&av->fid));

	attr.name = "shared";
	CHECK_EQ(fi_av_open(dom, &attr, &av, NULL), -FI_ENOSYS);
	attr.name = NULL;
	attr.flags = FI_EVENT;
	CHECK_EQ(fi_av_open(dom, &attr, &av, NULL), -FI_ENOSYS);
	attr.flags = 0;
	attr.type = (enum fi_av_type)42;
	CHECK_EQ(fi_av_open(dom, &attr, &av, NULL), -FI_EINVAL);
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1",	       "--jobs", "4", "--heap-mb",
					   "2",		"--hugepages", "32",	 NULL};
	struct fid_domain *dom, *dom2;
	struct fid_fabric *fab;
	struct fi_info *info;

	kp_require_hugepages(32);
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, args));
	CHECK_OK(setenv("KR_KEEPER_SOCKET", K.sock, 1));

	test_getinfo(&info);
	CHECK_OK(fi_fabric(info->fabric_attr, &fab, NULL));
	CHECK_EQ(my_jobs(), 0);
	CHECK_OK(fi_domain(fab, info, &dom, NULL));
	CHECK_EQ(my_jobs(), 1);
	CHECK_OK(fi_domain(fab, info, &dom2, NULL)); /* the same attach */
	CHECK_EQ(my_jobs(), 1);
	test_av(dom, FI_AV_TABLE);
	test_av(dom2, FI_AV_MAP);
	CHECK_OK(fi_close(&dom2->fid));
	CHECK_EQ(my_jobs(), 1);
	CHECK_OK(fi_close(&dom->fid));
	CHECK_EQ(my_jobs(), 0);
	CHECK_OK(fi_close(&fab->fid));
	fi_freeinfo(info);

	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("ofi_objects");
}
