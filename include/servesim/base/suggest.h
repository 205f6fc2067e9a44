/*
 * "Did you mean": the known name closest to a misspelled one, for error messages about
 * unknown scenario keys, commands and options. Closeness is the optimal-string-alignment
 * distance (Levenshtein's insertions, deletions and substitutions, plus Damerau's swap of
 * two neighbouring characters), and a name is suggested only when it is near enough to be
 * a typo: at most max(1, length / 3) edits from the word typed.
 *
 * Ownership: nothing is allocated; sv_suggest returns one of the caller's strings.
 */
#ifndef SERVESIM_SUGGEST_H
#define SERVESIM_SUGGEST_H

#include <stddef.h>

/* Edits (insert, delete, substitute, swap neighbours) that turn a into b. Strings longer
 * than SV_SUGGEST_MAX_LEN characters count as far from everything (SV_SUGGEST_FAR). */
#define SV_SUGGEST_MAX_LEN 127
#define SV_SUGGEST_FAR 1000
int sv_edit_distance(const char *a, const char *b);

/* The candidate closest to word, or NULL when none is within max(1, strlen(word) / 3)
 * edits. Ties go to the earlier candidate. NULL entries in cands are skipped. */
const char *sv_suggest(const char *word, const char *const *cands, size_t n);

#endif
