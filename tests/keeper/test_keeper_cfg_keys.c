/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's key table (keeper_config_keys.c) against what reads and
 * documents it: the parser takes every key with its example value, stores
 * a plain number or switch where the table says (and nowhere else), and
 * refuses a key the table lacks or marks command-line only; krpoold(8) has an OPTIONS entry for every
 * option and none for anything else, and the sample configuration names
 * every key, set or commented, and sets no other.
 * Arguments: the man page, the sample configuration.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "keeper/keeper.h"
#include "kr_test.h"

static const struct kr_keeper_cfg_key *key_find(const char *name)
{
	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++)
		if (!strcmp(kr_keeper_cfg_keys[i].name, name))
			return &kr_keeper_cfg_keys[i];
	return NULL;
}

/*
 * A number or switch lands exactly at the table's offset: the configuration
 * after the key differs from the defaults there and nowhere else.
 */
static void test_stored(const struct kr_keeper_cfg_key *k)
{
	struct kr_keeper_cfg def, cfg;
	size_t width = k->kind == KR_CFG_U32 ? sizeof(uint32_t) : sizeof(bool);
	const char *val = k->kind == KR_CFG_U32 ? "12345" : "true";
	char err[256];

	kr_keeper_cfg_default(&def);
	if (k->kind == KR_CFG_BOOL)
		*(bool *)((char *)&def + k->off) = false;
	memcpy(&cfg, &def, sizeof(cfg));
	if (kr_keeper_cfg_set(&cfg, k->name, val, err, sizeof(err)))
		KR_FAIL("%s = %s: %s", k->name, val, err);
	if (k->kind == KR_CFG_U32)
		CHECK_EQ(*(uint32_t *)((char *)&cfg + k->off), 12345u);
	else
		CHECK(*(bool *)((char *)&cfg + k->off));
	CHECK(k->off + width <= sizeof(cfg));
	memcpy((char *)&cfg + k->off, (char *)&def + k->off, width);
	if (memcmp(&cfg, &def, sizeof(cfg)))
		KR_FAIL("%s wrote outside its field", k->name);
}

/* Each number and switch reaches the field its name says (a wrong offset in the table). */
static void test_fields(void)
{
	struct kr_keeper_cfg c;
	const struct {
		const char *key;
		void *field;
	} f[] = {
	    {"tenants", &c.tenants},	       {"dcis", &c.dcis},
	    {"rc-spares", &c.rc_spares},       {"jobs", &c.jobs},
	    {"vqps", &c.vqps},		       {"ports", &c.ports},
	    {"heap-mb", &c.heap_mb},	       {"warm-heaps", &c.warm_heaps},
	    {"hugepages", &c.hugepages_mb},    {"low-water", &c.low_water},
	    {"dcis-max", &c.dcis_max},	       {"rc-max", &c.rc_max},
	    {"uid-launches", &c.uid_launches}, {"uid-ports", &c.uid_ports},
	    {"trusted", &c.trusted},	       {"require-kmod", &c.require_kmod},
	    {"foreground", &c.foreground},     {"verbose", &c.verbose},
	};
	size_t stored = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		const struct kr_keeper_cfg_key *k = kr_keeper_cfg_key_find(f[i].key);

		CHECK(k != NULL);
		if ((char *)&c + k->off != (char *)f[i].field)
			KR_FAIL("%s is stored at offset %zu, not in its field", f[i].key, k->off);
	}
	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++)
		stored += kr_keeper_cfg_keys[i].kind != KR_CFG_OWN;
	CHECK_EQ(stored, sizeof(f) / sizeof(f[0]));
}

static void test_parser(void)
{
	struct kr_keeper_cfg cfg;
	char err[256];

	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++) {
		const struct kr_keeper_cfg_key *k = &kr_keeper_cfg_keys[i];
		const char *name = k->file_only ? "tenant.0.uid" : k->name;

		if (k->cli_only)
			continue;
		kr_keeper_cfg_default(&cfg);
		CHECK(k->example != NULL);
		if (kr_keeper_cfg_set(&cfg, name, k->example, err, sizeof(err)))
			KR_FAIL("the parser refuses %s = %s: %s", name, k->example, err);
		CHECK(k->help && *k->help);
		CHECK(kr_keeper_cfg_key_find(name) == k);
		if (k->kind != KR_CFG_OWN)
			test_stored(k);
	}
	kr_keeper_cfg_default(&cfg);
	CHECK_ERR(kr_keeper_cfg_set(&cfg, "no-such-key", "1", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown key") != NULL);
	CHECK_ERR(kr_keeper_cfg_set(&cfg, "config", "/etc/krcore/x", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown key") != NULL);
	CHECK_ERR(kr_keeper_cfg_set(&cfg, "tenant.0.gid", "1", err, sizeof(err)), -EINVAL);
	CHECK_ERR(kr_keeper_cfg_set(&cfg, "dcis", "eight", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "dcis") != NULL);
	CHECK_ERR(kr_keeper_cfg_set(&cfg, "verbose", "maybe", err, sizeof(err)), -EINVAL);
}

/* "\-\-gid\-index" at s: the key it names into out. */
static void man_key(const char *s, char *out, size_t len)
{
	size_t n = 0;

	s += strlen("\\-\\-");
	while (*s && n + 1 < len) {
		if (s[0] == '\\' && s[1] == '-') {
			out[n++] = '-';
			s += 2;
		} else if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')) {
			out[n++] = *s++;
		} else {
			break;
		}
	}
	out[n] = '\0';
}

static void test_man(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], name[64];
	bool in_options = false, after_tp = false;
	uint32_t seen[128] = {0};

	CHECK(f != NULL);
	CHECK(kr_keeper_cfg_nkeys <= 128);
	while (fgets(line, sizeof(line), f)) {
		const char *at;

		if (!strncmp(line, ".SH", 3))
			in_options = strstr(line, "OPTIONS") != NULL;
		if (!in_options)
			continue;
		if (!strncmp(line, ".TP", 3)) {
			after_tp = true;
			continue;
		}
		if (!after_tp)
			continue;
		after_tp = false;
		at = strstr(line, "\\-\\-");
		if (!at)
			KR_FAIL("%s: an OPTIONS entry without a long option: %s", path, line);
		man_key(at, name, sizeof(name));
		if (!key_find(name))
			KR_FAIL("%s documents --%s, which is no key of krpoold", path, name);
		seen[key_find(name) - kr_keeper_cfg_keys]++;
	}
	fclose(f);
	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++) {
		const struct kr_keeper_cfg_key *k = &kr_keeper_cfg_keys[i];

		if (!k->file_only && seen[i] != 1)
			KR_FAIL("%s: --%s has %u OPTIONS entries, not 1", path, k->name, seen[i]);
	}
}

static void test_sample(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	uint32_t seen[128] = {0};

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *eq, *end;
		const struct kr_keeper_cfg_key *k;
		bool set;

		set = *s != '#';
		if (!set)
			s += strspn(s + 1, " ") + 1;
		eq = strstr(s, " = ");
		end = s + strcspn(s, " =\n");
		if (!eq || end != eq)
			continue; /* prose */
		*end = '\0';
		if (!strncmp(s, "tenant.", 7))
			s = "tenant.N.uid";
		k = key_find(s);
		if (!k && set)
			KR_FAIL("%s sets %s, which is no key of krpoold", path, s);
		if (k)
			seen[k - kr_keeper_cfg_keys]++;
	}
	fclose(f);
	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++)
		if (!kr_keeper_cfg_keys[i].cli_only && !seen[i])
			KR_FAIL("%s does not name %s", path, kr_keeper_cfg_keys[i].name);
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	test_parser();
	test_fields();
	test_man(argv[1]);
	test_sample(argv[2]);
	KR_PASS("keeper_cfg_keys");
}
