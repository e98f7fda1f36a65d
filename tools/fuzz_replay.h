/* The replay entry of the libFuzzer harnesses (tools/fuzz_rows.c, tools/fuzz_lane.c), built with
 * -DBG_FUZZ_REPLAY by any compiler: `PROGRAM FILE...` runs each file through the harness's
 * LLVMFuzzerTestOneInput once, in a heap block of exactly its size (so AddressSanitizer sees a
 * read one byte past it), and exits 0 when no sanitizer or promise stopped it. Included by the
 * harness after its LLVMFuzzerTestOneInput. */
#ifndef BG_FUZZ_REPLAY_H
#define BG_FUZZ_REPLAY_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            perror(argv[i]);
            return 2;
        }
        uint8_t *data = NULL;
        size_t len = 0, cap = 0, got;
        do {
            if (len == cap) {
                cap = cap ? cap * 2 : 65536;
                uint8_t *p = realloc(data, cap);
                if (p == NULL)
                    return 2;
                data = p;
            }
            got = fread(data + len, 1, cap - len, f);
            len += got;
        } while (got > 0);
        fclose(f);
        uint8_t *exact = malloc(len ? len : 1);
        memcpy(exact, data, len);
        free(data);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        printf("ok %s\n", argv[i]);
    }
    return 0;
}
#endif
