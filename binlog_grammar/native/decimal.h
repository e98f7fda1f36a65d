/* MySQL's packed binary DECIMAL (NEWDECIMAL) to its digits, as strings/decimal.cc's bin2decimal
 * and decimal2string read it (the Python side: binlog_grammar/runtime/decimal.py, whose docstring
 * gives the layout). A DECIMAL(p, s) takes bg_decimal_size(p, s) bytes: groups of nine digits in
 * four big-endian bytes, a leading and a trailing partial group in fewer bytes; a negative number
 * has every byte inverted, and the top bit of the first byte is flipped. */
#ifndef BG_DECIMAL_H
#define BG_DECIMAL_H
#include <stdint.h>
#include <string.h>

static const int bg_dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
static const uint32_t bg_pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                      100000000, 1000000000};

/* digits this backend writes at most (a DECIMAL has at most 65; more is refused) */
#define BG_DECIMAL_MAX_DIGITS 200

/* bytes of a DECIMAL(precision, scale); -1 for a precision and scale that are not one */
static inline int64_t bg_decimal_size(int64_t precision, int64_t scale)
{
    if (precision < 1 || scale < 0 || scale > precision || precision > BG_DECIMAL_MAX_DIGITS)
        return -1;
    int64_t intg = precision - scale;
    return intg / 9 * 4 + bg_dig2bytes[intg % 9] + scale / 9 * 4 + bg_dig2bytes[scale % 9];
}

/* Write the value's text as Python's format(Decimal(v), "f") writes it (no leading zeros in
 * the integer part but one, exactly `scale` fraction digits, "-" for a negative number, a
 * negative zero kept when scale > 0) into out (room for BG_DECIMAL_MAX_DIGITS + 3 bytes); its
 * length, or -1 when a group holds more digits than it may (the Python side refuses those). */
static int bg_decimal_text(char *out, const uint8_t *data, int64_t size, int64_t precision,
                           int64_t scale)
{
    uint8_t buf[BG_DECIMAL_MAX_DIGITS];
    char digits[BG_DECIMAL_MAX_DIGITS + 1];
    int64_t intg, nd = 0, pos = 0;
    if (bg_decimal_size(precision, scale) != size || size <= 0)
        return -1;
    intg = precision - scale;  /* after the check: any other precision and scale may overflow */
    int negative = !(data[0] & 0x80);
    for (int64_t k = 0; k < size; k++)
        buf[k] = (uint8_t)(negative ? ~data[k] : data[k]);
    buf[0] &= 0x7f;  /* the sign bit, flipped back (and, for a negative number, inverted) */
    /* the groups in wire order: widths of digits */
    int widths[BG_DECIMAL_MAX_DIGITS / 9 + 4], ngroups = 0;
    if (intg % 9)
        widths[ngroups++] = (int)(intg % 9);
    for (int64_t g = 0; g < intg / 9 + scale / 9; g++)
        widths[ngroups++] = 9;
    if (scale % 9)
        widths[ngroups++] = (int)(scale % 9);
    for (int g = 0; g < ngroups; g++) {
        int w = widths[g], nb = w == 9 ? 4 : bg_dig2bytes[w];
        uint32_t x = 0;
        for (int b = 0; b < nb; b++)
            x = x << 8 | buf[pos + b];
        pos += nb;
        if (x >= bg_pow10[w])
            return -1;
        for (int d = w - 1; d >= 0; d--) {
            digits[nd + d] = (char)('0' + x % 10);
            x /= 10;
        }
        nd += w;
    }
    int all_zero = 1;
    for (int64_t k = 0; k < nd; k++)
        if (digits[k] != '0')
            all_zero = 0;
    if (negative && scale == 0 && all_zero)
        negative = 0;  /* bin2decimal: a zero with no fraction is a plain zero */
    int n = 0;
    if (negative)
        out[n++] = '-';
    int64_t first = 0;  /* the integer part without its leading zeros, "0" when none is left */
    while (first < intg && digits[first] == '0')
        first++;
    if (first == intg)
        out[n++] = '0';
    for (int64_t k = first; k < intg; k++)
        out[n++] = digits[k];
    if (scale > 0) {
        out[n++] = '.';
        for (int64_t k = intg; k < nd; k++)
            out[n++] = digits[k];
    }
    return n;
}

#endif
