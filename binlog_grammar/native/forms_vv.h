/* The forms of the -vv text in C: one function per form of output/forms.py FORMS["vv"] (which
 * column type uses which form is that table's, read by codegen/c_rows.py), each writing a value
 * as output/text.py's function of the same name writes it, from the fields of the spec's value
 * types (bg_value.f[BG_F_<field id>]). A value whose Python form would take another road (a date
 * the Python adapter keeps as text and parses back, a TIME minute over 59, a fraction over six
 * digits) is refused (BG_REFUSE), and the Python readers write the event: the two backends
 * print the same bytes (tests/native/test_rows.py compares them on random bytes).
 * Included by the generated rows.c, after the readers and the output buffer. */
#ifndef BG_FORMS_VV_H
#define BG_FORMS_VV_H

typedef int bg_vv_fn(bg_buf *b, const bg_colplan *cp, const bg_value *v);

static int bg_vv_text(bg_buf *b, const char *s, int n)
{
    if (n < 0)
        return BG_REFUSE;
    return bg_put(b, s, (size_t)n) < 0 ? BG_NOMEM : 0;
}

#define BG_VV_PRINTF(b, ...) do { \
        char t_[96]; \
        int n_ = snprintf(t_, sizeof t_, __VA_ARGS__); \
        if (n_ < 0 || n_ >= (int)sizeof t_) return BG_REFUSE; \
        return bg_vv_text((b), t_, n_); \
    } while (0)

#define BG_FIELD(v, id) ((v)->f[BG_F_##id])

/* "." and the first `digits` of the six-digit microseconds (nothing for 0 digits) */
static int bg_fraction(char *t, int64_t us, int64_t digits)
{
    char six[8];
    if (digits <= 0)
        return 0;
    if (digits > 6)
        digits = 6;
    snprintf(six, sizeof six, "%06d", (int)us);
    t[0] = '.';
    memcpy(t + 1, six, (size_t)digits);
    return (int)digits + 1;
}

static int bg_vv_int_signed_width(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    if (cp->arg < 1 || cp->arg > 8)  /* before the product: a plan's number may be any int64 */
        return BG_REFUSE;
    int bits = 8 * (int)cp->arg;
    uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1, u = v->u & mask;
    if (!(u >> (bits - 1) & 1))
        BG_VV_PRINTF(b, "%llu", (unsigned long long)u);
    BG_VV_PRINTF(b, "%lld (%llu)", (long long)bg_sext(u, bits / 8), (unsigned long long)u);
}

static int bg_vv_decimal_digits(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char t[BG_DECIMAL_MAX_DIGITS + 4];
    (void)cp;
    return bg_vv_text(b, t, bg_decimal_text(t, v->data, v->len, v->precision, v->scale));
}

/* a float as Python's format() writes NaN: "nan", whatever its sign bit */
static int bg_vv_float_left20g(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (isnan(v->d))
        BG_VV_PRINTF(b, "%-20s", "nan");
    BG_VV_PRINTF(b, "%-20g", v->d);
}

static int bg_vv_double_g20(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (isnan(v->d))
        BG_VV_PRINTF(b, "nan");
    BG_VV_PRINTF(b, "%.20g", v->d);
}

static int bg_vv_year_1900(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    BG_VV_PRINTF(b, "%04d", (int)BG_FIELD(v, raw) + 1900);
}

static int bg_date_ok(const bg_value *v)
{
    return BG_FIELD(v, year) >= 0 && BG_FIELD(v, year) <= 9999 && BG_FIELD(v, month) >= 0 &&
           BG_FIELD(v, month) <= 99 && BG_FIELD(v, day) >= 0 && BG_FIELD(v, day) <= 99;
}

static int bg_vv_date_colon(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (!bg_date_ok(v))
        return BG_REFUSE;
    BG_VV_PRINTF(b, "'%04d:%02d:%02d'", (int)BG_FIELD(v, year), (int)BG_FIELD(v, month),
                 (int)BG_FIELD(v, day));
}

static int bg_datetime_ok(const bg_value *v)
{
    return bg_date_ok(v) && BG_FIELD(v, hour) >= 0 && BG_FIELD(v, hour) <= 99 &&
           BG_FIELD(v, minute) >= 0 && BG_FIELD(v, minute) <= 99 && BG_FIELD(v, second) >= 0 &&
           BG_FIELD(v, second) <= 99 && BG_FIELD(v, microsecond) >= 0 &&
           BG_FIELD(v, microsecond) <= 999999;
}

static int bg_vv_datetime_digits(bg_buf *b, const bg_value *v, int64_t digits)
{
    char frac[8];
    if (!bg_datetime_ok(v))
        return BG_REFUSE;
    int nf = bg_fraction(frac, BG_FIELD(v, microsecond), digits);
    BG_VV_PRINTF(b, "'%04d-%02d-%02d %02d:%02d:%02d%.*s'", (int)BG_FIELD(v, year),
                 (int)BG_FIELD(v, month), (int)BG_FIELD(v, day), (int)BG_FIELD(v, hour),
                 (int)BG_FIELD(v, minute), (int)BG_FIELD(v, second), nf, frac);
}

static int bg_vv_datetime(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    return bg_vv_datetime_digits(b, v, 0);
}

static int bg_vv_datetime_fsp(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    return bg_vv_datetime_digits(b, v, cp->arg);
}

/* TIMESTAMP: Python reads the seconds back from a datetime, so only what one holds is written */
static int bg_timestamp_ok(const bg_value *v)
{
    return BG_FIELD(v, seconds) >= 0 && BG_FIELD(v, seconds) <= 0xFFFFFFFFLL &&
           BG_FIELD(v, microsecond) >= 0 && BG_FIELD(v, microsecond) <= 999999;
}

static int bg_vv_epoch_seconds(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    if (!bg_timestamp_ok(v))
        return BG_REFUSE;
    BG_VV_PRINTF(b, "%d", (int)(int32_t)(uint32_t)BG_FIELD(v, seconds));
}

static int bg_vv_epoch_fsp(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    char frac[8];
    if (!bg_timestamp_ok(v))
        return BG_REFUSE;
    int64_t us = BG_FIELD(v, seconds) == 0 && BG_FIELD(v, microsecond) == 0 ? 0 : BG_FIELD(v, microsecond);
    int nf = bg_fraction(frac, us, cp->arg);
    BG_VV_PRINTF(b, "%lld%.*s", (long long)BG_FIELD(v, seconds), nf, frac);
}

static int bg_time_ok(const bg_value *v)
{
    return BG_FIELD(v, hour) >= 0 && BG_FIELD(v, hour) <= 9999 && BG_FIELD(v, minute) >= 0 &&
           BG_FIELD(v, minute) <= 59 && BG_FIELD(v, second) >= 0 && BG_FIELD(v, second) <= 59 &&
           BG_FIELD(v, microsecond) >= 0 && BG_FIELD(v, microsecond) <= 999999;
}

static int bg_vv_time_digits(bg_buf *b, const bg_value *v, int64_t digits)
{
    char frac[8];
    if (!bg_time_ok(v))
        return BG_REFUSE;
    int nf = bg_fraction(frac, BG_FIELD(v, microsecond), digits);
    BG_VV_PRINTF(b, "'%s%02d:%02d:%02d%.*s'", BG_FIELD(v, negative) ? "-" : "",
                 (int)BG_FIELD(v, hour), (int)BG_FIELD(v, minute), (int)BG_FIELD(v, second), nf,
                 frac);
}

static int bg_vv_time(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    return bg_vv_time_digits(b, v, 0);
}

static int bg_vv_time_fsp(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    return bg_vv_time_digits(b, v, cp->arg);
}

/* b'...': the last nbits binary digits of the value's `width` bytes, most significant first */
static int bg_bit_digits(bg_buf *b, uint64_t u, int width, int64_t nbits, int storage_order)
{
    char t[8 * 8 + 3];
    int n = 0;
    if (width < 1 || width > 8 || nbits < 1 || nbits > 8 * width)
        return BG_REFUSE;
    t[n++] = 'b';
    t[n++] = '\'';
    for (int k = 0; k < width; k++) {
        /* BIT is stored big-endian; SET prints its bytes in storage order (least first) */
        int byte = storage_order ? k : width - 1 - k;
        uint8_t x = (uint8_t)(u >> (8 * byte));
        for (int bit = 7; bit >= 0; bit--) {
            int at = 8 * k + (7 - bit);  /* this digit's place among all 8 * width */
            if (at >= 8 * width - nbits)
                t[n++] = (char)('0' + (x >> bit & 1));
        }
    }
    t[n++] = '\'';
    return bg_vv_text(b, t, n);
}

static int bg_vv_bits(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    return bg_bit_digits(b, v->u, v->width, cp->arg, 0);
}

static int bg_vv_set_bits(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    return bg_bit_digits(b, v->u, v->width, cp->arg, 1);
}

static int bg_vv_enum_index(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)cp;
    BG_VV_PRINTF(b, "%llu", (unsigned long long)v->u);
}

/* bytes in single quotes: below 0x20 as \xNN, every other byte as it is */
static int bg_quoted(bg_buf *b, const uint8_t *p, int64_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (bg_buf_room(b, (size_t)n * 4 + 2) < 0)
        return BG_NOMEM;
    char *o = b->p + b->n;
    *o++ = '\'';
    for (int64_t k = 0; k < n; k++) {
        uint8_t c = p[k];
        if (c < 0x20) {
            *o++ = '\\';
            *o++ = 'x';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        } else {
            *o++ = (char)c;
        }
    }
    *o++ = '\'';
    b->n = (size_t)(o - b->p);
    return 0;
}

static int bg_vv_quoted_bytes(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    int64_t n = v->len;
    if (v->type == BG_T_value_geometry) {  /* the SRID's four bytes, then the WKB */
        uint8_t all[4];
        uint32_t srid = (uint32_t)BG_FIELD(v, srid);
        for (int k = 0; k < 4; k++)
            all[k] = (uint8_t)(srid >> (8 * k));
        if (n < 0)
            return BG_REFUSE;
        /* the SRID sits right before the WKB in the row image */
        if (memcmp(all, v->data - 4, 4) != 0)
            return BG_REFUSE;
        return bg_quoted(b, v->data - 4, n + 4);
    }
    if (cp->strip_nul)
        while (n > 0 && v->data[n - 1] == 0)
            n--;
    return bg_quoted(b, v->data, n);
}

/* JSON (MySQL's binary JSON to its text) and VECTOR are not written by this backend yet */
static int bg_vv_json_text_quoted(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)b; (void)cp; (void)v;
    return BG_REFUSE;
}

static int bg_vv_vector_bytes(bg_buf *b, const bg_colplan *cp, const bg_value *v)
{
    (void)b; (void)cp; (void)v;
    return BG_REFUSE;
}

/* whether the -vv form of this column writes this value, refusing nothing (out of memory
 * aside): the COUNT sink runs the others only. An integer's digits, a float's %g (at most 27
 * characters: BG_VV_PRINTF's 96 hold them), a year, an ENUM's index and quoted bytes fit any
 * value; int_signed_width refuses a width outside 1..8 and quoted_bytes a GEOMETRY's SRID that
 * is not the one before its WKB, whatever else the value holds. The dates, times, datetimes and
 * timestamps are written when their form's own check (bg_date_ok ... bg_timestamp_ok) passes:
 * their fields then have at most four digits (a timestamp's seconds ten, a fraction six), well
 * inside BG_VV_PRINTF's 96 characters; BIT and SET's bits likewise. A value the check fails is
 * run, and refused, by its form.
 * A form added above is not total until it is named here (tests/native/test_rows.py: COUNT
 * refuses what VV refuses) */
static int bg_vv_total(const bg_colplan *cp, const bg_value *v)
{
    switch (cp->form) {
    case BG_VV_int_signed_width:
        return cp->arg >= 1 && cp->arg <= 8;
    case BG_VV_float_left20g:
    case BG_VV_double_g20:
    case BG_VV_year_1900:
    case BG_VV_enum_index:
        return 1;
    case BG_VV_quoted_bytes:
        return v->type != BG_T_value_geometry;
    case BG_VV_date_colon:
        return bg_date_ok(v);
    case BG_VV_datetime:
    case BG_VV_datetime_fsp:
        return bg_datetime_ok(v);
    case BG_VV_epoch_seconds:
    case BG_VV_epoch_fsp:
        return bg_timestamp_ok(v);
    case BG_VV_time:
    case BG_VV_time_fsp:
        return bg_time_ok(v);
    case BG_VV_bits:
    case BG_VV_set_bits:  /* bg_bit_digits' own check: then at most 64 digits, in its 67 */
        return v->width >= 1 && v->width <= 8 && cp->arg >= 1 && cp->arg <= 8 * v->width;
    default:
        return 0;
    }
}

#endif
