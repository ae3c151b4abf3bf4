// CICU: the few ICU services the text index needs, behind plain C types.
//
// ICU's own headers are included only in cicu.c: a Swift file that imports
// Foundation and a module over ICU's headers does not compile (Foundation
// carries its own ICU copy and the declarations clash). So this header
// exposes UTF-8 bytes and int32_t only.
#ifndef CICU_H
#define CICU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Fold mode bit: NFKC and full case folding (ICU's NFKC_Casefold).
#define CICU_FOLD_CASE 1
/// Fold mode bit: diacritics removed (NFD, nonspacing marks dropped, NFC).
#define CICU_FOLD_DIACRITICS 2

/// Word segments of UTF-8 `text` by Unicode word segmentation
/// (`ubrk_open(UBRK_WORD, "")` over a UTF-8 `UText`), with ICU's dictionary
/// segmentation for Chinese, Japanese, Thai and others.
///
/// Writes the byte offsets `start, end` of each word-like segment (rule status
/// not `UBRK_WORD_NONE`: spaces and punctuation are skipped) into `bounds`,
/// two entries a word, for at most `capacity` words. Returns the number of
/// words in the text, which may exceed `capacity` (call again with room for
/// them), or -1 when ICU fails. Thread-safe: each thread keeps its own iterator.
int32_t cicu_words(const uint8_t *text, int32_t length, int32_t *bounds, int32_t capacity);

/// Folds UTF-8 `text` by `mode` (`CICU_FOLD_CASE`, `CICU_FOLD_DIACRITICS`,
/// both, or 0 for NFC only) into `out`. Invalid UTF-8 becomes U+FFFD.
/// Returns the folded length in bytes, which may exceed `capacity` (call again
/// with a larger buffer), or -1 when ICU fails. Thread-safe.
int32_t cicu_fold(const uint8_t *text, int32_t length, int32_t mode, uint8_t *out, int32_t capacity);

/// 1 when the code point `scalar` is East Asian Wide or Fullwidth
/// (`u_getIntPropertyValue(scalar, UCHAR_EAST_ASIAN_WIDTH)` is
/// `U_EA_WIDE` or `U_EA_FULLWIDTH`): a terminal gives it two columns.
int32_t cicu_is_wide(uint32_t scalar);

/// The ICU version in use, e.g. "72.1", into `out` (NUL-terminated).
void cicu_version(char *out, int32_t capacity);

#ifdef __cplusplus
}
#endif

#endif
