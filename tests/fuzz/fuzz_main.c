/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs a libFuzzer harness without libFuzzer (any compiler): every file
 * named on the command line, or in a directory named there, goes through
 * LLVMFuzzerTestOneInput once; with -n N, N more inputs follow, made by
 * flipping bits of those files (a smoke run, not a search). scripts/fuzz.sh
 * builds the harnesses with clang's libFuzzer for the real search.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: what the harness saw, printed at the end. */
void fuzz_summary(void) __attribute__((weak));

#define FUZZ_MAX_INPUT 4096

static uint8_t inputs[256][FUZZ_MAX_INPUT];
static size_t lens[256];
static unsigned int ninputs;

static void run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		exit(1);
	}
	n = fread(inputs[ninputs % 256], 1, FUZZ_MAX_INPUT, f);
	fclose(f);
	lens[ninputs % 256] = n;
	LLVMFuzzerTestOneInput(inputs[ninputs % 256], n);
	ninputs++;
}

static void run_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (stat(path, &st)) {
		perror(path);
		exit(1);
	}
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char p[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		run_file(p);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	unsigned long extra = 0;
	uint64_t s = 0x853c49e6748fea9bull;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			extra = strtoul(argv[++i], NULL, 0);
		else
			run_path(argv[i]);
	}
	if (!ninputs) {
		fprintf(stderr, "usage: %s [-n N] FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (unsigned long k = 0; k < extra; k++) {
		uint8_t buf[FUZZ_MAX_INPUT];
		unsigned int i = (unsigned int)(k % (ninputs < 256 ? ninputs : 256));
		size_t n = lens[i] ? lens[i] : 1;

		memcpy(buf, inputs[i], lens[i]);
		if (!lens[i])
			buf[0] = 0;
		for (int f = 0; f < 4; f++) {
			s ^= s << 13, s ^= s >> 7, s ^= s << 17;
			buf[(s >> 8) % n] ^= (uint8_t)(1u << (s & 7));
		}
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("%u inputs and %lu variations: no crash, no hang\n", ninputs, extra);
	if (fuzz_summary)
		fuzz_summary();
	return 0;
}
