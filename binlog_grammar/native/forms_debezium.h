/* The forms of the Debezium envelope in C: one function per form of FORMS["debezium"]
 * (binlog_grammar/runtime/forms.py; which column type uses which form is that table's, read by
 * codegen/c_rows.py), each writing a value as `json.JSONEncoder(ensure_ascii=False)` writes what
 * output/debezium_values.py's form of the same name makes of the Python value. The connector's
 * options reach a form through its column's flags (BG_DZ_...) and arg, set per run by
 * output/debezium_native.py, which also makes what a column's text and members are in JSON.
 * A value the Python side would write another way (text that does not decode, which Java reads
 * as U+FFFD; a value Python refuses; MySQL's binary JSON; a POINT column) is refused
 * (BG_REFUSE), and the Python path writes the event: tests/output/test_debezium_native.py
 * compares the two. Included by the generated rows.c, after forms_jsonl.h. */
#ifndef BG_FORMS_DEBEZIUM_H
#define BG_FORMS_DEBEZIUM_H

#define BG_DZ_NULL(b) return bg_vv_text((b), "null", 4)

/* floor(a / b) for b > 0, as Python's // */
static int64_t bg_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0)) ? q - 1 : q;
}

/* a number as Python's repr of the double writes it */
static int bg_dz_double(bg_buf *b, double d)
{
    char t[48];
    return bg_vv_text(b, t, bg_float_repr(d, t));
}

/* float32(): NaN and the infinities as strings; else the shortest "%.{p}g" (p = 1..9) that
 * reads back as the same 32-bit float, as the double it is */
static int bg_dz_float_of(bg_buf *b, double d)
{
    if (isnan(d))
        return bg_vv_text(b, "\"NaN\"", 5);
    if (isinf(d))
        return d > 0 ? bg_vv_text(b, "\"Infinity\"", 10) : bg_vv_text(b, "\"-Infinity\"", 11);
    float target = (float)d;
    for (int p = 1; p < 10; p++) {
        char t[48];
        int n = snprintf(t, sizeof t, "%.*g", p, d);
        if (n <= 0 || n >= (int)sizeof t)
            return BG_REFUSE;
        double cand = strtod(t, NULL);
        float f = (float)cand;
        if (memcmp(&f, &target, sizeof f) == 0)
            return bg_dz_double(b, cand);
    }
    return bg_dz_double(b, d);
}

/* the shortest big-endian two's-complement bytes of the integer be[0..n) holds (n >= 1, its top
 * bit its sign) as base64 in quotes: Java's BigInteger.toByteArray */
static int bg_dz_unscaled(bg_buf *b, const uint8_t *be, int n)
{
    int s = 0;
    while (s < n - 1 && ((be[s] == 0x00 && !(be[s + 1] & 0x80)) ||
                         (be[s] == 0xFF && (be[s + 1] & 0x80))))
        s++;
    return bg_base64(b, be + s, n - s, 0);
}

/* a 64-bit integer (signed, or the unsigned bits) as bg_dz_unscaled's bytes */
static int bg_dz_unscaled64(bg_buf *b, uint64_t u, int is_signed)
{
    uint8_t be[9];
    be[0] = is_signed && (int64_t)u < 0 ? 0xFF : 0x00;
    for (int k = 0; k < 8; k++)
        be[1 + k] = (uint8_t)(u >> (56 - 8 * k));
    return bg_dz_unscaled(b, be, 9);
}

/* TINYINT .. INT: the number */
static int bg_dz_int(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (v->kind != BG_K_int)
        return BG_REFUSE;
    if (v->is_signed)
        BG_JL_PRINTF(b, "%lld", (long long)v->i);
    BG_JL_PRINTF(b, "%llu", (unsigned long long)v->u);
}

/* YEAR: the year field, 0 as 1900 */
static int bg_dz_year(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (v->type != BG_T_value_year)
        return BG_REFUSE;
    int64_t y = BG_FIELD(v, year);
    BG_JL_PRINTF(b, "%lld", (long long)(y ? y : 1900));
}

/* BIGINT: unsigned above 2^63-1 wrapped to a negative long; precise: an unsigned column's value
 * as a Decimal of scale 0 */
static int bg_dz_bigint(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (v->kind != BG_K_int)
        return BG_REFUSE;
    if (cp->flags & BG_DZ_PRECISE)
        return bg_dz_unscaled64(b, v->is_signed ? (uint64_t)v->i : v->u, v->is_signed);
    BG_JL_PRINTF(b, "%lld", (long long)(v->is_signed ? v->i : (int64_t)v->u));
}

/* DECIMAL: arg 0 precise (base64 of the unscaled value's bytes), 1 string, 2 double */
static int bg_dz_decimal(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char t[BG_DECIMAL_MAX_DIGITS + 6];
    if (v->kind != BG_K_decimal)
        return BG_REFUSE;
    int n = bg_decimal_text(t + 1, v->data, v->len, v->precision, v->scale);
    if (n < 0)
        return BG_REFUSE;
    if (cp->arg == 1) {
        t[0] = '"';
        t[n + 1] = '"';
        return bg_vv_text(b, t, n + 2);
    }
    t[n + 1] = '\0';
    if (cp->arg == 2)
        return bg_dz_double(b, strtod(t + 1, NULL));
    if (cp->arg != 0)
        return BG_REFUSE;
    uint8_t be[BG_DECIMAL_MAX_DIGITS / 2 + 2];  /* a digit is under 4 bits; one byte of sign */
    int nb = (int)sizeof be, neg = t[1] == '-';
    memset(be, 0, sizeof be);
    for (int k = 1; k <= n; k++) {
        if (t[k] < '0' || t[k] > '9')
            continue;  /* the sign and the point */
        unsigned carry = (unsigned)(t[k] - '0');
        for (int j = nb - 1; j >= 0; j--) {
            unsigned x = be[j] * 10u + carry;
            be[j] = (uint8_t)x;
            carry = x >> 8;
        }
    }
    if (neg) {  /* two's complement */
        unsigned carry = 1;
        for (int j = nb - 1; j >= 0; j--) {
            unsigned x = (uint8_t)~be[j] + carry;
            be[j] = (uint8_t)x;
            carry = x >> 8;
        }
    }
    return bg_dz_unscaled(b, be, nb);
}

static int bg_dz_float32(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    return v->kind != BG_K_float ? BG_REFUSE : bg_dz_float_of(b, v->d);
}

static int bg_dz_float64(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (v->kind != BG_K_float)
        return BG_REFUSE;
    return isfinite(v->d) ? bg_dz_double(b, v->d) : bg_dz_float_of(b, v->d);
}

/* -- temporal values ------------------------------------------------------------------------ */

/* days from 1970-01-01 to a date of the proleptic Gregorian calendar */
static int64_t bg_days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* enable.time.adjuster: a year 0-99 as 2000+ (0-69) or 1900+, unless that makes 29 February
 * a day of a common year */
static int64_t bg_dz_adjust(const bg_colplan *cp, int64_t y, int64_t m, int64_t d)
{
    if (!(cp->flags & BG_DZ_ADJUST) || y >= 100)
        return y;
    int64_t ny = y + (y < 70 ? 2000 : 1900);
    return m == 2 && d == 29 && !bg_leap(ny) ? y : ny;
}

/* a zero or invalid date (MySQL's text in Python): null, or `zero` in a NOT NULL column */
static int bg_dz_zero(bg_buf *b, const bg_colplan *cp, const char *zero)
{
    if (cp->flags & BG_DZ_NULLABLE)
        BG_DZ_NULL(b);
    return bg_vv_text(b, zero, (int)strlen(zero));
}

/* DATE: days since 1970-01-01 */
static int bg_dz_epoch_days(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (v->type != BG_T_value_date)
        return BG_REFUSE;
    int64_t y = BG_FIELD(v, year), m = BG_FIELD(v, month), d = BG_FIELD(v, day);
    if (!bg_valid_datetime(y, m, d, 0, 0, 0, 0))
        return bg_dz_zero(b, cp, "0");
    BG_JL_PRINTF(b, "%lld", (long long)bg_days_from_civil(bg_dz_adjust(cp, y, m, d), m, d));
}

/* DATETIME: microseconds since the epoch read as UTC (BG_DZ_MICROS), else milliseconds */
static int bg_dz_datetime(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (v->type != BG_T_value_datetime && v->type != BG_T_value_datetime2)
        return BG_REFUSE;
    int64_t y = BG_FIELD(v, year), mo = BG_FIELD(v, month), d = BG_FIELD(v, day);
    int64_t h = BG_FIELD(v, hour), mi = BG_FIELD(v, minute), s = BG_FIELD(v, second);
    int64_t us = BG_FIELD(v, microsecond);
    if (!bg_valid_datetime(y, mo, d, h, mi, s, us))
        return bg_dz_zero(b, cp, "0");
    int64_t days = bg_days_from_civil(bg_dz_adjust(cp, y, mo, d), mo, d);
    int64_t total = ((days * 86400 + h * 3600 + mi * 60 + s) * 1000000) + us;
    BG_JL_PRINTF(b, "%lld", (long long)(cp->flags & BG_DZ_MICROS ? total : bg_floor_div(total, 1000)));
}

/* TIMESTAMP: ISO-8601 in UTC ending in Z, the fraction to arg digits (at most 6) */
static int bg_dz_zoned_timestamp(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char frac[24];
    if (v->type != BG_T_value_timestamp && v->type != BG_T_value_timestamp2)
        return BG_REFUSE;
    int64_t s = BG_FIELD(v, seconds), us = BG_FIELD(v, microsecond), y, mo, d;
    if (s == 0 && us == 0)
        return bg_dz_zero(b, cp, "\"1970-01-01T00:00:00Z\"");
    if (s < 0 || s > 0xFFFFFFFFLL || us < 0 || us > 999999)
        return BG_REFUSE;  /* Python's datetime refuses it: the Python readers say so */
    bg_civil(s / 86400, &y, &mo, &d);
    int nf = bg_frac_text(frac, us, cp->arg);
    BG_JL_PRINTF(b, "\"%04d-%02d-%02dT%02d:%02d:%02d%.*sZ\"", (int)y, (int)mo, (int)d,
                 (int)(s % 86400 / 3600), (int)(s % 3600 / 60), (int)(s % 60), nf, frac);
}

/* TIME: microseconds (BG_DZ_MICROS) or milliseconds; connect: null outside one day; MySQL's
 * text (a string) when minutes or seconds are past 59 */
static int bg_dz_micro_time(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (v->type != BG_T_value_time && v->type != BG_T_value_time2)
        return BG_REFUSE;
    int64_t neg = BG_FIELD(v, negative), h = BG_FIELD(v, hour), mi = BG_FIELD(v, minute);
    int64_t s = BG_FIELD(v, second), us = BG_FIELD(v, microsecond);
    if (h < 0 || mi < 0 || s < 0 || us < 0 || h > 100000000 || us > 100000000)
        return BG_REFUSE;
    if (mi > 59 || s > 59)
        return bg_jl_iso_time(b, cp, v);  /* the reader's text: written as a string */
    int64_t total = ((h * 60 + mi) * 60 + s) * 1000000 + us;
    if (neg)
        total = -total;
    if ((cp->flags & BG_DZ_CONNECT) && !(total >= 0 && total < 86400000000LL))
        BG_DZ_NULL(b);
    BG_JL_PRINTF(b, "%lld", (long long)(cp->flags & BG_DZ_MICROS ? total : bg_floor_div(total, 1000)));
}

/* -- bits, members, bytes and text ----------------------------------------------------------- */

/* BIT(1): a boolean; BIT(n), n = arg: base64 of its ceil(n/8) bytes, least significant first */
static int bg_dz_bits(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    uint8_t le[256];
    if (v->type != BG_T_value_bit || cp->arg < 0 || cp->arg > 8 * 255 + 7)
        return BG_REFUSE;
    if (cp->arg == 1)
        return v->u ? bg_vv_text(b, "true", 4) : bg_vv_text(b, "false", 5);
    int64_t size = cp->arg > 0 ? (cp->arg + 7) / 8 : 1;
    if (size < 8 && v->u >> (8 * size))
        return BG_REFUSE;  /* int.to_bytes overflows: the Python path says so */
    for (int64_t k = 0; k < size; k++)
        le[k] = k < 8 ? (uint8_t)(v->u >> (8 * k)) : 0;
    return bg_base64(b, le, size, 0);
}

/* ENUM: the member (forms_jsonl.h's rule: "" for 0, the index when no such member) */
static int bg_dz_enum(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    return v->type != BG_T_value_enum ? BG_REFUSE : bg_jl_member(b, cp, v);
}

/* SET: its members in definition order joined by "," (the plan's members in that order, each
 * a JSON string, mask 1 << k), or the bitmask when it has bits past the members */
static int bg_dz_enum_set(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (v->type != BG_T_value_set)
        return BG_REFUSE;
    if (cp->nmembers < 0 || cp->pad < 0 || (cp->pad < 64 && v->u >> cp->pad))
        BG_JL_PRINTF(b, "%llu", (unsigned long long)v->u);
    int first = 1;
    if (bg_put(b, "\"", 1) < 0)
        return BG_NOMEM;
    for (int k = 0; k < cp->nmembers; k++) {
        if (!(v->u & cp->mask[k]))
            continue;
        if (cp->member[k] == NULL || cp->member_len[k] < 2)
            return BG_REFUSE;
        if ((!first && bg_put(b, ",", 1) < 0) ||
                bg_put(b, cp->member[k] + 1, cp->member_len[k] - 2) < 0)
            return BG_NOMEM;
        first = 0;
    }
    return bg_put(b, "\"", 1) < 0 ? BG_NOMEM : 0;
}

/* binary.handling.mode: base64 (bytes, base64), base64-url-safe, hex; `zeros` 0x00 after */
static int bg_dz_binary(bg_buf *b, const bg_colplan *cp, const uint8_t *p, int64_t n, int64_t zeros)
{
    static const char hex[] = "0123456789abcdef";
    if (!(cp->flags & BG_DZ_HEX)) {
        size_t at = b->n;
        int w = bg_base64(b, p, n, zeros);
        if (w < 0 || !(cp->flags & BG_DZ_URLSAFE))
            return w;
        for (size_t k = at; k < b->n; k++)
            b->p[k] = b->p[k] == '+' ? '-' : b->p[k] == '/' ? '_' : b->p[k];
        return 0;
    }
    if (n < 0 || zeros < 0 || zeros > BG_BASE64_MAX_PAD || n + zeros > ((int64_t)1 << 40))
        return BG_REFUSE;
    if (bg_buf_room(b, (size_t)(2 * (n + zeros) + 2)) < 0)
        return BG_NOMEM;
    char *o = b->p + b->n;
    *o++ = '"';
    for (int64_t k = 0; k < n + zeros; k++) {
        uint8_t c = k < n ? p[k] : 0;
        *o++ = hex[c >> 4];
        *o++ = hex[c & 15];
    }
    *o++ = '"';
    b->n = (size_t)(o - b->p);
    return 0;
}

/* CHAR, VARCHAR, TEXT, BINARY, BLOB: text in its charset (arg TEXT_UTF8 / TEXT_TABLE), or
 * binary (TEXT_BASE64, BINARY(n) padded to pad) as binary.handling.mode writes it */
static int bg_dz_string(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (v->data == NULL || v->kind == BG_K_compressed_text || v->type == BG_T_compressed_data ||
            v->type == BG_T_value_varchar_compressed || v->type == BG_T_value_blob_compressed)
        return BG_REFUSE;
    switch (cp->arg) {
    case BG_TEXT_BASE64:
        return bg_dz_binary(b, cp, v->data, v->len, cp->pad > v->len ? cp->pad - v->len : 0);
    case BG_TEXT_UTF8:
        return bg_json_utf8(b, v->data, v->len);
    case BG_TEXT_TABLE:
        return cp->table == NULL ? BG_REFUSE : bg_json_table(b, cp->table, v->data, v->len);
    }
    return BG_REFUSE;
}

/* GEOMETRY (not a POINT column: no plan gives it this form): {"wkb": base64, "srid": N|null} */
static int bg_dz_geometry(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char t[32];
    int w;
    (void)cp;
    if (v->type != BG_T_value_geometry)
        return BG_REFUSE;
    if (bg_put(b, "{\"wkb\": ", 8) < 0)
        return BG_NOMEM;
    if ((w = bg_base64(b, v->data, v->len, 0)) < 0)  /* base64 whatever binary.handling.mode */
        return w;
    uint32_t srid = (uint32_t)BG_FIELD(v, srid);
    int n = srid ? snprintf(t, sizeof t, ", \"srid\": %lu}", (unsigned long)srid)
                 : snprintf(t, sizeof t, ", \"srid\": null}");
    return bg_vv_text(b, t, n);
}

/* MySQL's binary JSON to its text is not written by this backend yet */
static int bg_dz_json(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)b; (void)cp; (void)v;
    return BG_REFUSE;
}

/* by the value's Python type: left to the Python path */
static int bg_dz_value(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)b; (void)cp; (void)v;
    return BG_REFUSE;
}

#endif
