/*
 * "Did you mean": edit distance and the closest known name (see
 * include/servesim/base/suggest.h). Three rows of the dynamic-programming table suffice
 * for the optimal-string-alignment distance, so nothing is allocated.
 */
#include "servesim/base/suggest.h"

#include <string.h>

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int sv_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SV_SUGGEST_MAX_LEN || lb > SV_SUGGEST_MAX_LEN) return SV_SUGGEST_FAR;
    /* rows[i % 3][j]: distance between a's first i and b's first j characters. */
    int rows[3][SV_SUGGEST_MAX_LEN + 1];
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
    }
    return rows[la % 3][lb];
}

const char *sv_suggest(const char *word, const char *const *cands, size_t n)
{
    int limit = (int)(strlen(word) / 3);
    if (limit < 1) limit = 1;
    const char *best = NULL;
    int best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        int d = sv_edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}
