/* The forms of JSON lines in C: one function per form of output/forms.py FORMS["jsonl"] (which
 * column type uses which form is that table's, read by codegen/c_rows.py), each writing a value
 * as `json.dumps(..., ensure_ascii=False)` writes what output/dump.py's form of the same name
 * makes of the Python value (JSONL_FORMS, json_value). A value whose JSON the Python side would
 * write another way (text that does not decode, which gets `text_base64`; a value Python
 * refuses; MySQL's binary JSON) is refused (BG_REFUSE), and the Python readers write the event:
 * tests/native/test_rows_jsonl.py compares the two on drawn and damaged rows and every binlog.
 * What a column's text and members are in JSON (its charset's characters, escaped) is made
 * once per table in Python (output/jsonl_native.py) and given in the plan.
 * Included by the generated rows.c, after forms_vv.h. */
#ifndef BG_FORMS_JSONL_H
#define BG_FORMS_JSONL_H
#include <stdlib.h>

typedef int bg_jl_fn(bg_buf *b, const bg_colplan *cp, const bg_value *v);

#define BG_JL_PRINTF BG_VV_PRINTF

/* an integer as Python writes it: YEAR is its `year` field, the others the value as read */
static int bg_jl_number(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (v->type == BG_T_value_year)
        BG_JL_PRINTF(b, "%lld", (long long)BG_FIELD(v, year));
    if (v->is_signed)
        BG_JL_PRINTF(b, "%lld", (long long)v->i);
    BG_JL_PRINTF(b, "%llu", (unsigned long long)v->u);
}

/* format(Decimal, "f") in quotes */
static int bg_jl_decimal_string(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char t[BG_DECIMAL_MAX_DIGITS + 6];
    (void)cp;
    t[0] = '"';
    int n = bg_decimal_text(t + 1, v->data, v->len, v->precision, v->scale);
    if (n < 0)
        return BG_REFUSE;
    t[n + 1] = '"';
    return bg_vv_text(b, t, n + 2);
}

/* -- floats: Python's repr of a double --------------------------------------------------- */

/* The digits of "%.{p-1}e" of d (p significant digits) into digits, and the exponent; 0 when
 * the text is not what the C locale writes. */
static int bg_float_digits(double d, int p, char *digits, int *exp10)
{
    char t[40];
    int n = snprintf(t, sizeof t, "%.*e", p - 1, d), nd = 0, k = 0;
    if (n <= 0 || n >= (int)sizeof t)
        return 0;
    for (; k < n && t[k] != 'e'; k++) {
        if (t[k] >= '0' && t[k] <= '9')
            digits[nd++] = t[k];
        else if (t[k] != '.')
            return 0;
    }
    if (k >= n || nd != p)
        return 0;
    char *end;
    long e = strtol(t + k + 1, &end, 10);
    if (*end != '\0')
        return 0;
    digits[nd] = '\0';
    *exp10 = (int)e;
    return 1;
}

/* Does the decimal digits x 10^(exp10 - p + 1) read back as d? */
static int bg_float_back(double d, const char *digits, int p, int exp10)
{
    char t[48];
    snprintf(t, sizeof t, "%.1s.%se%d", digits, digits + 1, exp10);
    if (p == 1)
        snprintf(t, sizeof t, "%.1se%d", digits, exp10);
    return strtod(t, NULL) == d;
}

/* One up in the last of p digits (9.99 -> 1.00 and the exponent one more). */
static void bg_digits_up(char *digits, int p, int *exp10)
{
    int k = p - 1;
    while (k >= 0 && digits[k] == '9')
        digits[k--] = '0';
    if (k >= 0) {
        digits[k]++;
    } else {
        digits[0] = '1';
        (*exp10)++;
    }
}

/* repr(d) of a finite double, as Python writes it: the shortest digits that read back as d
 * (glibc's printf rounds correctly, so the nearest p-digit decimal is tried for p = 1..17;
 * at a power of two the interval of d is wider above it, so the one above is tried too),
 * fixed notation for decimal exponents -4 < e <= 16 with ".0" for a whole number, else
 * d.ddde+XX. Its length, or -1. */
static int bg_float_repr(double d, char *out)
{
    char digits[24];
    int exp10 = 0, p, n = 0;
    if (d == 0)
        return sprintf(out, signbit(d) ? "-0.0" : "0.0");
    if (d < 0) {
        out[n++] = '-';
        d = -d;
    }
    int m;
    int pow2 = frexp(d, &m) == 0.5;
    if (!pow2) {
        /* away from a power of two the interval of d is symmetric, so once p digits read
         * back, so do p + 1 (the nearest p + 1 digits are at least as near): the shortest is
         * found by halving 1..17, in 5 tries instead of up to 17 */
        int lo = 1, hi = 17;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (!bg_float_digits(d, mid, digits, &exp10))
                return -1;
            if (bg_float_back(d, digits, mid, exp10))
                hi = mid;
            else
                lo = mid + 1;
        }
        p = lo;
        if (!bg_float_digits(d, p, digits, &exp10) || !bg_float_back(d, digits, p, exp10))
            return -1;
    }
    else for (p = 1; p <= 17; p++) {  /* at a power of two: each p in turn */
        if (!bg_float_digits(d, p, digits, &exp10))
            return -1;
        if (bg_float_back(d, digits, p, exp10))
            break;
        {  /* the one above, in the wider half of the interval */
            char up[24];
            int e = exp10;
            memcpy(up, digits, (size_t)p + 1);
            bg_digits_up(up, p, &e);
            if (bg_float_back(d, up, p, e)) {
                memcpy(digits, up, (size_t)p + 1);
                exp10 = e;
                break;
            }
        }
    }
    if (p > 17)
        return -1;
    while (p > 1 && digits[p - 1] == '0')
        p--;
    int decpt = exp10 + 1;  /* the value is 0.DIGITS x 10^decpt */
    if (decpt <= -4 || decpt > 16) {
        out[n++] = digits[0];
        if (p > 1) {
            out[n++] = '.';
            memcpy(out + n, digits + 1, (size_t)p - 1);
            n += p - 1;
        }
        n += sprintf(out + n, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else if (decpt <= 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (int k = 0; k < -decpt; k++)
            out[n++] = '0';
        memcpy(out + n, digits, (size_t)p);
        n += p;
    } else if (decpt >= p) {
        memcpy(out + n, digits, (size_t)p);
        n += p;
        for (int k = p; k < decpt; k++)
            out[n++] = '0';
        out[n++] = '.';
        out[n++] = '0';
    } else {
        memcpy(out + n, digits, (size_t)decpt);
        n += decpt;
        out[n++] = '.';
        memcpy(out + n, digits + decpt, (size_t)(p - decpt));
        n += p - decpt;
    }
    return n;
}

/* a number; NaN and the infinities as the strings json_value gives them */
static int bg_jl_float_number(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char t[48];
    (void)cp;
    if (isnan(v->d))
        return bg_vv_text(b, "\"NaN\"", 5);
    if (isinf(v->d))
        return v->d > 0 ? bg_vv_text(b, "\"Infinity\"", 10) : bg_vv_text(b, "\"-Infinity\"", 11);
    return bg_vv_text(b, t, bg_float_repr(v->d, t));
}

/* -- temporal values ------------------------------------------------------------------------ */

/* "." and the first `fsp` digits of "%06lld" of us (runtime/values.py _frac_text) */
static int bg_frac_text(char *t, int64_t us, int64_t fsp)
{
    char all[24];
    if (fsp <= 0)
        return 0;
    int n = snprintf(all, sizeof all, "%06lld", (long long)us);
    if (fsp < n)
        n = (int)fsp;
    t[0] = '.';
    memcpy(t + 1, all, (size_t)n);
    return n + 1;
}

/* date.isoformat() of a valid date, and MySQL's text of an invalid one, are the same text */
static int bg_jl_iso_date(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    BG_JL_PRINTF(b, "\"%04lld-%02lld-%02lld\"", (long long)BG_FIELD(v, year),
                 (long long)BG_FIELD(v, month), (long long)BG_FIELD(v, day));
}

static int bg_leap(int64_t y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* would Python's datetime() take these fields? */
static int bg_valid_datetime(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s,
                             int64_t us)
{
    static const int mdays[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1)
        return 0;
    if (d > mdays[mo] + (mo == 2 && bg_leap(y)))
        return 0;
    return h >= 0 && h < 24 && mi >= 0 && mi < 60 && s >= 0 && s < 60 && us >= 0 && us < 1000000;
}

/* isoformat() of a datetime: ".ffffff" only when there are microseconds; then `z` */
static int bg_iso(bg_buf *b, int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s,
                  int64_t us, const char *z)
{
    char frac[8] = "";
    if (us)
        snprintf(frac, sizeof frac, ".%06d", (int)us);
    BG_JL_PRINTF(b, "\"%04d-%02d-%02dT%02d:%02d:%02d%s%s\"", (int)y, (int)mo, (int)d, (int)h,
                 (int)mi, (int)s, frac, z);
}

/* the day of the proleptic Gregorian calendar `days` after 1970-01-01 */
static void bg_civil(int64_t days, int64_t *y, int64_t *m, int64_t *d)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* DATETIME: isoformat() when valid, else MySQL's text with the column's fraction digits;
 * TIMESTAMP: the UTC time with "Z", and 0 as MySQL's zero timestamp text */
static int bg_jl_iso_datetime(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char frac[24];
    int64_t us = BG_FIELD(v, microsecond);
    if (v->type == BG_T_value_timestamp || v->type == BG_T_value_timestamp2) {
        int64_t s = BG_FIELD(v, seconds), y, mo, d;
        if (s == 0 && us == 0) {
            int nf = bg_frac_text(frac, 0, cp->arg);
            BG_JL_PRINTF(b, "\"0000-00-00 00:00:00%.*s\"", nf, frac);
        }
        if (s < 0 || s > 0xFFFFFFFFLL || us < 0 || us > 999999)
            return BG_REFUSE;  /* Python's datetime refuses it: the Python readers say so */
        bg_civil(s / 86400, &y, &mo, &d);
        return bg_iso(b, y, mo, d, s % 86400 / 3600, s % 3600 / 60, s % 60, us, "Z");
    }
    int64_t y = BG_FIELD(v, year), mo = BG_FIELD(v, month), d = BG_FIELD(v, day);
    int64_t h = BG_FIELD(v, hour), mi = BG_FIELD(v, minute), s = BG_FIELD(v, second);
    if (bg_valid_datetime(y, mo, d, h, mi, s, us))
        return bg_iso(b, y, mo, d, h, mi, s, us, "");
    if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0 || us < 0)
        return BG_REFUSE;
    int nf = bg_frac_text(frac, us, cp->arg);
    BG_JL_PRINTF(b, "\"%04lld-%02lld-%02lld %02lld:%02lld:%02lld%.*s\"", (long long)y,
                 (long long)mo, (long long)d, (long long)h, (long long)mi, (long long)s, nf, frac);
}

/* TIME: a timedelta's text (output/dump.py _time_text) when minutes and seconds are under 60,
 * else MySQL's text with the column's fraction digits */
static int bg_jl_iso_time(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char frac[24];
    int64_t neg = BG_FIELD(v, negative), h = BG_FIELD(v, hour), mi = BG_FIELD(v, minute);
    int64_t s = BG_FIELD(v, second), us = BG_FIELD(v, microsecond);
    if (h < 0 || mi < 0 || s < 0 || us < 0 || h > 100000000 || us > 100000000)
        return BG_REFUSE;
    if (mi > 59 || s > 59) {
        int nf = bg_frac_text(frac, us, cp->arg);
        BG_JL_PRINTF(b, "\"%s%02lld:%02lld:%02lld%.*s\"", neg ? "-" : "", (long long)h,
                     (long long)mi, (long long)s, nf, frac);
    }
    int64_t total = ((h * 60 + mi) * 60 + s) * 1000000 + us;
    int64_t secs = total / 1000000, part = total % 1000000;
    if (part)
        snprintf(frac, sizeof frac, ".%06lld", (long long)part);
    else
        frac[0] = '\0';
    BG_JL_PRINTF(b, "\"%s%02lld:%02lld:%02lld%s\"", neg && total ? "-" : "",
                 (long long)(secs / 3600), (long long)(secs / 60 % 60), (long long)(secs % 60), frac);
}

/* -- members --------------------------------------------------------------------------------- */

/* ENUM: the member's text ("" for 0), the index when the metadata has no such member */
static int bg_jl_member(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (cp->nmembers < 0)  /* no members in the metadata */
        BG_JL_PRINTF(b, "%llu", (unsigned long long)v->u);
    if (v->u == 0)
        return bg_vv_text(b, "\"\"", 2);
    if (v->u > (uint64_t)cp->nmembers)
        BG_JL_PRINTF(b, "%llu", (unsigned long long)v->u);
    const char *m = cp->member[v->u - 1];
    if (m == NULL)
        return BG_REFUSE;
    return bg_vv_text(b, m, (int)cp->member_len[v->u - 1]);
}

/* SET: the list of its distinct members, sorted (the plan holds them so), or the bitmask when
 * it has bits past the members */
static int bg_jl_members(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    /* a count below 0 (no plan makes one) as one past the bits: no shift by it */
    if (cp->nmembers < 0 || cp->pad < 0 || (cp->pad < 64 && v->u >> cp->pad))
        BG_JL_PRINTF(b, "%llu", (unsigned long long)v->u);
    int first = 1;
    if (bg_put(b, "[", 1) < 0)
        return BG_NOMEM;
    for (int k = 0; k < cp->nmembers; k++) {
        if (!(v->u & cp->mask[k]))
            continue;
        if (cp->member[k] == NULL)
            return BG_REFUSE;
        if ((!first && bg_put(b, ", ", 2) < 0) || bg_put(b, cp->member[k], cp->member_len[k]) < 0)
            return BG_NOMEM;
        first = 0;
    }
    return bg_put(b, "]", 1) < 0 ? BG_NOMEM : 0;
}

/* -- bytes and text -------------------------------------------------------------------------- */

#define BG_BASE64_MAX_PAD 65535

/* base64 (RFC 4648, with padding) of p[0..n) followed by `zeros` 0x00 bytes, in quotes */
static int bg_base64(bg_buf *b, const uint8_t *p, int64_t n, int64_t zeros)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int64_t total = n + zeros;
    /* the zeros are BINARY(n)'s pad, a plan's number: no CHAR's metadata says more than 1023
     * bytes, so a larger one is refused rather than sizing the buffer */
    if (n < 0 || zeros < 0 || zeros > BG_BASE64_MAX_PAD || total > ((int64_t)1 << 40))
        return BG_REFUSE;
    if (bg_buf_room(b, (size_t)((total + 2) / 3 * 4 + 2)) < 0)
        return BG_NOMEM;
    char *o = b->p + b->n;
    *o++ = '"';
    for (int64_t k = 0; k < total; k += 3) {
        uint32_t x = 0;
        int got = 0;
        for (int j = 0; j < 3; j++) {
            x <<= 8;
            if (k + j < total) {
                x |= k + j < n ? p[k + j] : 0;
                got++;
            }
        }
        *o++ = abc[x >> 18 & 63];
        *o++ = abc[x >> 12 & 63];
        *o++ = got > 1 ? abc[x >> 6 & 63] : '=';
        *o++ = got > 2 ? abc[x & 63] : '=';
    }
    *o++ = '"';
    b->n = (size_t)(o - b->p);
    return 0;
}

/* GEOMETRY: {"srid": N, "wkb": base64} */
static int bg_jl_geometry(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char t[48];
    (void)cp;
    int n = snprintf(t, sizeof t, "{\"srid\": %llu, \"wkb\": ", (unsigned long long)(uint32_t)BG_FIELD(v, srid));
    int w;
    if (v->type != BG_T_value_geometry || bg_put(b, t, (size_t)n) < 0)
        return v->type != BG_T_value_geometry ? BG_REFUSE : BG_NOMEM;
    if ((w = bg_base64(b, v->data, v->len, 0)) < 0)
        return w;
    return bg_put(b, "}", 1) < 0 ? BG_NOMEM : 0;
}

/* MySQL's binary JSON to its text is not written by this backend yet */
static int bg_jl_json_document(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)b; (void)cp; (void)v;
    return BG_REFUSE;
}

/* how json.dumps writes an ASCII character of a string into e: its length, 0 when as it is */
static int bg_json_escape(uint8_t c, char *e)
{
    static const char hex[] = "0123456789abcdef";
    static const char short_[] = {['"'] = '"', ['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r',
                                  ['\t'] = 't', ['\b'] = 'b', ['\f'] = 'f'};
    if (c < sizeof short_ && short_[c] != 0) {
        e[0] = '\\';
        e[1] = short_[c];
        return 2;
    }
    if (c < 0x20) {
        memcpy(e, "\\u00", 4);
        e[4] = hex[c >> 4];
        e[5] = hex[c & 15];
        return 6;
    }
    return 0;
}

/* the length of the UTF-8 sequence at p (as Python's strict decoder takes it), 0 if invalid */
static int bg_utf8_len(const uint8_t *p, int64_t n)
{
    uint8_t c = p[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 &&
               (p[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* UTF-8 text as a JSON string; refused when the bytes are not UTF-8 (Python writes them \xNN
 * and adds text_base64) */
static int bg_json_utf8(bg_buf *b, const uint8_t *p, int64_t n)
{
    if (bg_buf_room(b, (size_t)n + 2) < 0 || bg_put(b, "\"", 1) < 0)
        return BG_NOMEM;
    int64_t k = 0, run = 0;
    char e[8];
    while (k < n) {
        int ne = p[k] < 0x80 ? bg_json_escape(p[k], e) : 0;
        if (ne == 0) {
            int len = bg_utf8_len(p + k, n - k);
            if (len == 0)
                return BG_REFUSE;
            k += len;
            continue;
        }
        if (bg_put(b, p + run, (size_t)(k - run)) < 0 || bg_put(b, e, (size_t)ne) < 0)
            return BG_NOMEM;
        k++;
        run = k;
    }
    if (bg_put(b, p + run, (size_t)(n - run)) < 0 || bg_put(b, "\"", 1) < 0)
        return BG_NOMEM;
    return 0;
}

/* text of a single-byte charset through the plan's table of each byte's JSON text */
static int bg_json_table(bg_buf *b, const uint8_t *table, const uint8_t *p, int64_t n)
{
    if (bg_put(b, "\"", 1) < 0)
        return BG_NOMEM;
    for (int64_t k = 0; k < n; k++) {
        const uint8_t *e = table + (size_t)p[k] * BG_TABLE_ENTRY;
        if (e[0] == BG_TABLE_REFUSE || e[0] >= BG_TABLE_ENTRY)
            return BG_REFUSE;
        if (bg_put(b, e + 1, e[0]) < 0)
            return BG_NOMEM;
    }
    return bg_put(b, "\"", 1) < 0 ? BG_NOMEM : 0;
}

/* CHAR, VARCHAR, TEXT, BLOB: binary as base64 (BINARY(n) padded to n), text in its charset */
static int bg_jl_text(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (v->data == NULL)  /* not a span a reader read (a plan's form on another type) */
        return BG_REFUSE;
    switch (cp->arg) {
    case BG_TEXT_BASE64:
        return bg_base64(b, v->data, v->len, cp->pad > v->len ? cp->pad - v->len : 0);
    case BG_TEXT_UTF8:
        return bg_json_utf8(b, v->data, v->len);
    case BG_TEXT_TABLE:
        return cp->table == NULL ? BG_REFUSE : bg_json_table(b, cp->table, v->data, v->len);
    }
    return BG_REFUSE;
}

/* by the value's Python type: only a type of no value (written as null before the form) */
static int bg_jl_value(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)b; (void)cp; (void)v;
    return BG_REFUSE;
}

#endif
