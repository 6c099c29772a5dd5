/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's key table (keeper_config_keys.c) against what reads and
 * documents it: the parser takes every key with its example value (and
 * refuses a key the table lacks), krpoold(8) has an OPTIONS entry for every
 * option and none for anything else, and the sample configuration names
 * every key, set or commented, and sets no other.
 * Arguments: the man page, the sample configuration.
 */
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
	}
	kr_keeper_cfg_default(&cfg);
	CHECK_ERR(kr_keeper_cfg_set(&cfg, "no-such-key", "1", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown key") != NULL);
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
	test_man(argv[1]);
	test_sample(argv[2]);
	KR_PASS("keeper_cfg_keys");
}
