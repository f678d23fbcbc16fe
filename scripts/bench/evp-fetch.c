/*
 * evp-fetch - OpenSSL 3's provider look-ups from many threads: the real
 * program of scripts/sweeps/bench-rwlock (issue 19). Debian's libcrypto.so.3
 * takes a pthread_rwlock_t for reading on every EVP_MD_fetch (its method
 * store, its name map: CRYPTO_THREAD_read_lock), a well-known bottleneck of
 * OpenSSL 3 servers that fetch per request. This driver is the loop such a
 * server runs; the library under test is Debian's, unmodified.
 *
 *   evp-fetch [-t THREADS] [-n FETCHES] [-a ALGORITHMS]
 *
 * Each thread fetches the digests named in ALGORITHMS (comma-separated,
 * default SHA256,SHA512,SHA3-256,BLAKE2b512) in turn, N times in all,
 * digests its own 64-byte message with each and frees it again, and folds
 * the digests into a checksum. It prints the checksum (the same for a given
 * -t, -n and -a under any lock: the output that `lockswap compare --check
 * stdout` holds every run to) and, on stderr, the elapsed time and fetches
 * per second. Exit status: 0, 1 if OpenSSL failed, 2 for a bad option.
 */
#define _GNU_SOURCE
#include <openssl/err.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_ALGOS 16

static const char *algos[MAX_ALGOS];
static unsigned nalgos;
static unsigned long fetches = 200000;

struct worker {
	pthread_t t;
	unsigned id;
	uint64_t sum;
	int failed;
};

static void *run(void *arg)
{
	struct worker *w = arg;
	unsigned char msg[64], out[EVP_MAX_MD_SIZE];
	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (unsigned char)(w->id * 31 + i);
	for (unsigned long i = 0; i < fetches; i++) {
		EVP_MD *md = EVP_MD_fetch(NULL, algos[i % nalgos], NULL);
		unsigned int len = 0;
		if (!md || !EVP_Digest(msg, sizeof msg, out, &len, md, NULL)) {
			w->failed = 1;
			EVP_MD_free(md);
			return NULL;
		}
		EVP_MD_free(md);
		uint64_t v;
		memcpy(&v, out, sizeof v);
		w->sum = (w->sum ^ v) * 0x100000001B3ull;
	}
	return NULL;
}

static void usage(FILE *f)
{
	fputs("usage: evp-fetch [-t THREADS] [-n FETCHES] [-a ALGORITHMS]\n"
	      "Each of THREADS threads (default 4) fetches FETCHES digests (default 200000) with\n"
	      "EVP_MD_fetch, the names of ALGORITHMS in turn (default SHA256,SHA512,SHA3-256,\n"
	      "BLAKE2b512), digests a message with each and frees it. Prints a checksum of the\n"
	      "digests on stdout, the time and fetches/s on stderr.\n",
	      f);
}

static unsigned long number(const char *opt, const char *v, unsigned long max)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end || n < 1 || n > max) {
		fprintf(stderr, "evp-fetch: %s: invalid value '%s' (expected 1..%lu)\n", opt, v, max);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned threads = 4;
	char list[256] = "SHA256,SHA512,SHA3-256,BLAKE2b512";
	int c;
	while ((c = getopt(argc, argv, "t:n:a:h")) != -1) {
		switch (c) {
		case 't':
			threads = (unsigned)number("-t", optarg, 1024);
			break;
		case 'n':
			fetches = number("-n", optarg, 1000000000ul);
			break;
		case 'a':
			if (strlen(optarg) >= sizeof list) {
				fprintf(stderr, "evp-fetch: -a: list too long\n");
				return 2;
			}
			strcpy(list, optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	for (char *save = NULL, *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		if (nalgos == MAX_ALGOS) {
			fprintf(stderr, "evp-fetch: -a: at most %d names\n", MAX_ALGOS);
			return 2;
		}
		algos[nalgos++] = a;
	}
	if (!nalgos) {
		fprintf(stderr, "evp-fetch: -a: no algorithm named\n");
		return 2;
	}
	struct worker *w = calloc(threads, sizeof *w);
	if (!w)
		return 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < threads; i++) {
		w[i].id = i;
		if (pthread_create(&w[i].t, NULL, run, &w[i])) {
			fprintf(stderr, "evp-fetch: pthread_create failed\n");
			return 1;
		}
	}
	uint64_t sum = 0;
	int failed = 0;
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(w[i].t, NULL);
		sum ^= w[i].sum;
		failed |= w[i].failed;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (failed) {
		fprintf(stderr, "evp-fetch: EVP_MD_fetch or EVP_Digest failed\n");
		ERR_print_errors_fp(stderr);
		return 1;
	}
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("evp-fetch: %u threads x %lu fetches: checksum %016llx\n", threads, fetches,
	       (unsigned long long)sum);
	fprintf(stderr, "evp-fetch: %.3f s, %.0f fetches/s\n", s, (double)threads * (double)fetches / s);
	free(w);
	return 0;
}
