/*
 * A main for the libFuzzer targets when libFuzzer is not there (gcc, or the tests'
 * ordinary builds): each argument is a file, fed once to LLVMFuzzerTestOneInput. ctest
 * runs every target this way over its seeds and its kept crash inputs
 * (tests/data/fuzz-regress/), so an input that once crashed stays a test in the Release
 * and sanitizer builds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    int ran = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "%s: cannot open %s\n", argv[0], argv[i]);
            return 1;
        }
        size_t cap = 4096, n = 0;
        uint8_t *buf = malloc(cap);
        size_t got;
        while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
            n += got;
            if (n == cap) {
                uint8_t *nb = realloc(buf, cap *= 2);
                if (!nb) free(buf);
                buf = nb;
            }
        }
        fclose(f);
        if (!buf) {
            fprintf(stderr, "%s: out of memory reading %s\n", argv[0], argv[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        ran++;
    }
    printf("%d input(s) ran\n", ran);
    return 0;
}
