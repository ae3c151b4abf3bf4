// The ICU calls behind CICU.h. ICU's headers stay in this file (see CICU.h).
#include "CICU.h"

#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>
#include <unicode/uversion.h>

// One word-break iterator per thread: ubrk_open loads rules and dictionaries
// (tens of microseconds) while ubrk_setUText is cheap. It is never closed:
// a process has few threads, and one iterator each costs a few kilobytes.
static _Thread_local UBreakIterator *threadIterator = NULL;

int32_t cicu_words(const uint8_t *text, int32_t length, int32_t *bounds, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    if (threadIterator == NULL) {
        threadIterator = ubrk_open(UBRK_WORD, "", NULL, 0, &status);
        if (U_FAILURE(status)) { threadIterator = NULL; return -1; }
    }
    // A UTF-8 UText makes the iterator report byte offsets into `text`
    // directly, so the caller never converts to UTF-16.
    UText ut = UTEXT_INITIALIZER;
    utext_openUTF8(&ut, (const char *)text, length, &status);
    if (U_FAILURE(status)) return -1;
    ubrk_setUText(threadIterator, &ut, &status);
    if (U_FAILURE(status)) { utext_close(&ut); return -1; }
    int32_t count = 0;
    int32_t start = ubrk_first(threadIterator);
    for (int32_t end = ubrk_next(threadIterator); end != UBRK_DONE; start = end, end = ubrk_next(threadIterator)) {
        if (ubrk_getRuleStatus(threadIterator) < UBRK_WORD_NONE_LIMIT) continue;
        if (count < capacity) {
            bounds[2 * count] = start;
            bounds[2 * count + 1] = end;
        }
        count++;
    }
    // Detach the text before it goes out of scope.
    UText empty = UTEXT_INITIALIZER;
    utext_openUTF8(&empty, "", 0, &status);
    ubrk_setUText(threadIterator, &empty, &status);
    utext_close(&ut);
    utext_close(&empty);
    return count;
}

// Growable per-thread UTF-16 scratch buffers for folding.
typedef struct { UChar *data; int32_t capacity; } Buffer;
static _Thread_local Buffer scratch[3];

static UChar *reserve(Buffer *b, int32_t n) {
    if (b->capacity < n) {
        int32_t c = n < 256 ? 256 : n * 2;
        UChar *d = realloc(b->data, (size_t)c * sizeof(UChar));
        if (d == NULL) return NULL;
        b->data = d;
        b->capacity = c;
    }
    return b->data;
}

// Normalizes src into buffer `b` with `norm`; returns the length or -1.
static int32_t normalize(const UNormalizer2 *norm, const UChar *src, int32_t n, Buffer *b) {
    for (;;) {
        UErrorCode status = U_ZERO_ERROR;
        int32_t len = unorm2_normalize(norm, src, n, b->data, b->capacity, &status);
        if (status == U_BUFFER_OVERFLOW_ERROR) {
            if (reserve(b, len + 1) == NULL) return -1;
            continue;
        }
        if (U_FAILURE(status)) return -1;
        return len;
    }
}

int32_t cicu_fold(const uint8_t *text, int32_t length, int32_t mode, uint8_t *out, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    // UTF-8 to UTF-16: never more UTF-16 units than UTF-8 bytes.
    if (reserve(&scratch[0], length + 1) == NULL) return -1;
    int32_t n = 0;
    u_strFromUTF8WithSub(scratch[0].data, scratch[0].capacity, &n, (const char *)text, length, 0xFFFD, NULL, &status);
    if (U_FAILURE(status)) return -1;
    Buffer *cur = &scratch[0];
    int32_t curLen = n;

    if (mode & CICU_FOLD_CASE) {
        const UNormalizer2 *nfkcCF = unorm2_getNFKCCasefoldInstance(&status);
        if (U_FAILURE(status)) return -1;
        int32_t len = normalize(nfkcCF, cur->data, curLen, &scratch[1]);
        if (len < 0) return -1;
        cur = &scratch[1];
        curLen = len;
    }
    if (mode & CICU_FOLD_DIACRITICS) {
        const UNormalizer2 *nfd = unorm2_getNFDInstance(&status);
        if (U_FAILURE(status)) return -1;
        Buffer *target = cur == &scratch[1] ? &scratch[2] : &scratch[1];
        int32_t len = normalize(nfd, cur->data, curLen, target);
        if (len < 0) return -1;
        // Drop nonspacing marks (general category Mn) in place.
        int32_t w = 0;
        for (int32_t i = 0; i < len;) {
            UChar32 c;
            int32_t start = i;
            U16_NEXT(target->data, i, len, c);
            if (u_charType(c) == U_NON_SPACING_MARK) continue;
            for (int32_t k = start; k < i; k++) target->data[w++] = target->data[k];
        }
        cur = target;
        curLen = w;
    }
    if (!(mode & CICU_FOLD_CASE) || (mode & CICU_FOLD_DIACRITICS)) {
        // Recompose: NFC for mode 0, and after marks were dropped from NFD.
        const UNormalizer2 *nfc = unorm2_getNFCInstance(&status);
        if (U_FAILURE(status)) return -1;
        Buffer *target = cur == &scratch[0] ? &scratch[1] : (cur == &scratch[1] ? &scratch[2] : &scratch[1]);
        int32_t len = normalize(nfc, cur->data, curLen, target);
        if (len < 0) return -1;
        cur = target;
        curLen = len;
    }
    int32_t outLen = 0;
    status = U_ZERO_ERROR;
    u_strToUTF8WithSub((char *)out, capacity, &outLen, cur->data, curLen, 0xFFFD, NULL, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR || status == U_STRING_NOT_TERMINATED_WARNING) return outLen;
    if (U_FAILURE(status)) return -1;
    return outLen;
}

void cicu_version(char *out, int32_t capacity) {
    UVersionInfo v;
    char s[U_MAX_VERSION_STRING_LENGTH];
    u_getVersion(v);
    u_versionToString(v, s);
    if (capacity <= 0) return;
    strncpy(out, s, (size_t)capacity - 1);
    out[capacity - 1] = 0;
}

int32_t cicu_is_wide(uint32_t scalar) {
    int32_t width = u_getIntPropertyValue((UChar32)scalar, UCHAR_EAST_ASIAN_WIDTH);
    return width == U_EA_WIDE || width == U_EA_FULLWIDTH;
}
