/* The Spark data source's row images as the buffers of Arrow arrays, written by the compiled row
 * loop (binlog_grammar/spark/arrow_rows.py is the Python side; it wraps the buffers with
 * pyarrow.Array.from_buffers, with no Python per row).
 *
 * An accumulator (arrow_new) takes the rows events of a batch one after another (arrow_rows:
 * the EACH sink of bg_rows_each with a JSON lines plan, each value's JSON text written by
 * bg_jl_write, the forms of dump --format jsonl), and rows Python made (arrow_put: the events
 * the C side refuses). For each of the images `before` and `after` it keeps one validity byte
 * per row (packed into Arrow's bitmap by arrow_take) and int32 offsets, and:
 *   - the map form (map<string,string>): per row the offset of its first entry; the entries'
 *     keys (column names) and values (JSON texts) as two string arrays (offsets and UTF-8);
 *   - the json form (image_format json): per row one object text `{"k":v,...}`.
 * JSON texts are compact (no space after `,` or `:`), as spark/typed.py's json_text writes
 * them: a value the JSON lines form writes as a list or object (SET, GEOMETRY) has the spaces
 * of json.dumps's separators taken out, outside its strings.
 * An event the row loop refuses (BG_SHORT, BG_REFUSE), or one that would take a buffer past
 * an int32 offset (BG_ARROW_FULL), leaves the accumulator as it was.
 * Included by the generated rows_module.c (binlog_grammar.native._rows), after its plans. */
#ifndef BG_ARROW_ROWS_H
#define BG_ARROW_ROWS_H

#define BG_ARROW_CAPSULE "binlog_grammar.native._rows.arrow"
#define BG_ARROW_FULL (-4)  /* the batch's buffers are full: take them, then add the event */
#define BG_ARROW_MAX ((size_t)INT32_MAX)

typedef struct bg_arrow_img {
    bg_buf off;     /* int32 per row + 1: map, its first entry; json, its text's first byte */
    bg_buf valid;   /* a byte per row: 1 an image, 0 none */
    bg_buf koff, kdata, voff, vdata;  /* map: keys and values (int32 offsets, UTF-8); json:
                                         the texts in vdata */
    int64_t entries, nulls;
} bg_arrow_img;

typedef struct bg_arrow {
    int json;
    int64_t rows;
    bg_buf row;     /* int32 per row: its index in its event (source.row) */
    bg_arrow_img img[2];
    /* the event being read */
    const bg_plan *plan;
    PyObject *keys;  /* map: each column's name, UTF-8 bytes */
    int single;      /* the image slot of an event of one image: 0 before, 1 after */
    int open;        /* the slot of the image being written, -1 none */
    int first;       /* json: no member written yet */
    int64_t index;
} bg_arrow;

static int bg_arrow_i32(bg_buf *b, int64_t v)
{
    int32_t x = (int32_t)v;
    return bg_buf_put(b, &x, 4);
}

static void bg_arrow_free(PyObject *capsule)
{
    bg_arrow *a = PyCapsule_GetPointer(capsule, BG_ARROW_CAPSULE);
    if (a == NULL)
        return;
    bg_buf_free(&a->row);
    for (int s = 0; s < 2; s++) {
        bg_arrow_img *im = &a->img[s];
        bg_buf_free(&im->off); bg_buf_free(&im->valid); bg_buf_free(&im->koff);
        bg_buf_free(&im->kdata); bg_buf_free(&im->voff); bg_buf_free(&im->vdata);
    }
    free(a);
}

/* empty buffers, each offsets buffer holding its first 0 */
static int bg_arrow_reset(bg_arrow *a)
{
    a->rows = 0;
    a->row.n = 0;
    for (int s = 0; s < 2; s++) {
        bg_arrow_img *im = &a->img[s];
        im->off.n = im->valid.n = im->koff.n = im->kdata.n = im->voff.n = im->vdata.n = 0;
        im->entries = im->nulls = 0;
        if (bg_arrow_i32(&im->off, 0) < 0 || bg_arrow_i32(&im->koff, 0) < 0 ||
                bg_arrow_i32(&im->voff, 0) < 0)
            return -1;
    }
    return 0;
}

/* the end of the image being written */
static int bg_arrow_close(bg_arrow *a)
{
    if (a->open < 0)
        return 0;
    bg_arrow_img *im = &a->img[a->open];
    a->open = -1;
    if (a->json)
        return bg_buf_put(&im->vdata, "}", 1) < 0 || bg_arrow_i32(&im->off, (int64_t)im->vdata.n) < 0
               ? -1 : 0;
    return bg_arrow_i32(&im->off, im->entries);
}

/* a row without this image */
static int bg_arrow_none(bg_arrow *a, int slot)
{
    bg_arrow_img *im = &a->img[slot];
    im->nulls++;
    return bg_buf_put(&im->valid, "\0", 1) < 0 ||
           bg_arrow_i32(&im->off, a->json ? (int64_t)im->vdata.n : im->entries) < 0 ? -1 : 0;
}

static int bg_arrow_open(bg_arrow *a, int slot)
{
    bg_arrow_img *im = &a->img[slot];
    a->open = slot;
    a->first = 1;
    if (bg_buf_put(&im->valid, "\1", 1) < 0)
        return -1;
    return a->json && bg_buf_put(&im->vdata, "{", 1) < 0 ? -1 : 0;
}

/* the JSON text at b->p + at, compact: a list or object loses the spaces json.dumps's
 * separators put outside its strings */
static void bg_arrow_compact(bg_buf *b, size_t at)
{
    if (b->n == at || (b->p[at] != '[' && b->p[at] != '{'))
        return;
    size_t w = at;
    int in = 0, esc = 0;
    for (size_t r = at; r < b->n; r++) {
        char c = b->p[r];
        if (in) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                in = 0;
        } else if (c == '"') {
            in = 1;
        } else if (c == ' ') {
            continue;
        }
        b->p[w++] = c;
    }
    b->n = w;
}

/* the EACH sink's callback: an image begins, or a column's NULL or value */
static int bg_arrow_each(void *ctx, int what, int index, const bg_value *v)
{
    bg_arrow *a = ctx;
    if (what == BG_EACH_IMAGE) {
        if (bg_arrow_close(a) < 0)
            return BG_NOMEM;
        int slot = a->plan->nimages == 2 ? index : a->single;
        if (index == 0) {  /* a new row */
            if (bg_arrow_i32(&a->row, a->index++) < 0)
                return BG_NOMEM;
            a->rows++;
            if (a->plan->nimages == 1 && bg_arrow_none(a, 1 - slot) < 0)
                return BG_NOMEM;
        }
        return bg_arrow_open(a, slot) < 0 ? BG_NOMEM : 0;
    }
    if (a->open < 0 || index < 0 || index >= a->plan->ncols)
        return BG_REFUSE;
    bg_arrow_img *im = &a->img[a->open];
    const bg_colplan *cp = &a->plan->cols[index];
    if (a->json) {  /* `"name":` is the plan's key `"name": ` without its space */
        if ((!a->first && bg_buf_put(&im->vdata, ",", 1) < 0) ||
                bg_buf_put(&im->vdata, cp->head, cp->head_len - 1) < 0)
            return BG_NOMEM;
        a->first = 0;
    } else {
        PyObject *k = PyTuple_GET_ITEM(a->keys, index);
        if (bg_buf_put(&im->kdata, PyBytes_AS_STRING(k), (size_t)PyBytes_GET_SIZE(k)) < 0 ||
                bg_arrow_i32(&im->koff, (int64_t)im->kdata.n) < 0)
            return BG_NOMEM;
        im->entries++;
    }
    size_t at = im->vdata.n;
    if (what == BG_EACH_NULL) {
        if (bg_buf_put(&im->vdata, "null", 4) < 0)
            return BG_NOMEM;
    } else {
        int w = bg_jl_write(&im->vdata, cp, v);
        if (w < 0)
            return w;
        bg_arrow_compact(&im->vdata, at);
    }
    if (!a->json && bg_arrow_i32(&im->voff, (int64_t)im->vdata.n) < 0)
        return BG_NOMEM;
    return 0;
}

/* where the accumulator's buffers end: what a refused event is taken back to */
typedef struct bg_arrow_mark {
    int64_t rows;
    size_t row;
    size_t n[2][6];
    int64_t entries[2], nulls[2];
} bg_arrow_mark;

static void bg_arrow_save(const bg_arrow *a, bg_arrow_mark *m)
{
    m->rows = a->rows;
    m->row = a->row.n;
    for (int s = 0; s < 2; s++) {
        const bg_arrow_img *im = &a->img[s];
        size_t n[6] = {im->off.n, im->valid.n, im->koff.n, im->kdata.n, im->voff.n, im->vdata.n};
        memcpy(m->n[s], n, sizeof n);
        m->entries[s] = im->entries;
        m->nulls[s] = im->nulls;
    }
}

static void bg_arrow_restore(bg_arrow *a, const bg_arrow_mark *m)
{
    a->rows = m->rows;
    a->row.n = m->row;
    for (int s = 0; s < 2; s++) {
        bg_arrow_img *im = &a->img[s];
        bg_buf *b[6] = {&im->off, &im->valid, &im->koff, &im->kdata, &im->voff, &im->vdata};
        for (int k = 0; k < 6; k++)
            b[k]->n = m->n[s][k];
        im->entries = m->entries[s];
        im->nulls = m->nulls[s];
    }
}

static int bg_arrow_full(const bg_arrow *a)
{
    for (int s = 0; s < 2; s++)
        if (a->img[s].kdata.n > BG_ARROW_MAX || a->img[s].vdata.n > BG_ARROW_MAX ||
                a->img[s].entries > (int64_t)INT32_MAX)
            return 1;
    return a->rows > (int64_t)INT32_MAX;
}

static bg_arrow *bg_arrow_of(PyObject *capsule)
{
    return PyCapsule_GetPointer(capsule, BG_ARROW_CAPSULE);
}

PyDoc_STRVAR(arrow_new_doc,
"arrow_new(json) -> an accumulator of a batch's images for arrow_rows, arrow_put, arrow_take\n"
"(json true: each image one JSON object text; false: a map of column name to JSON text).");

static PyObject *bg_py_arrow_new(PyObject *self, PyObject *args)
{
    int json;
    if (!PyArg_ParseTuple(args, "p", &json))
        return NULL;
    bg_arrow *a = calloc(1, sizeof *a);
    if (a == NULL)
        return PyErr_NoMemory();
    a->json = json;
    a->open = -1;
    PyObject *capsule = PyCapsule_New(a, BG_ARROW_CAPSULE, bg_arrow_free);
    if (capsule == NULL) {
        free(a);
        return NULL;
    }
    if (bg_arrow_reset(a) < 0) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    return capsule;
}

PyDoc_STRVAR(arrow_rows_doc,
"arrow_rows(acc, plan, data, single, keys) -> the number of rows added, or SHORT, REFUSE,\n"
"ARROW_FULL (nothing added)\n\n"
"The rows of a rows event (its row-image bytes) read with a JSON lines plan (sink JSONL) into\n"
"the accumulator: single, the slot of the one image of an insert (1, after) or a delete (0,\n"
"before); keys, each column's name as UTF-8 bytes (the map form; None for json).");

static PyObject *bg_py_arrow_rows(PyObject *self, PyObject *args)
{
    PyObject *acc, *capsule, *keys;
    Py_buffer view;
    int single;
    if (!PyArg_ParseTuple(args, "OOy*iO", &acc, &capsule, &view, &single, &keys))
        return NULL;
    bg_arrow *a = bg_arrow_of(acc);
    bg_owned_plan *op = a != NULL ? PyCapsule_GetPointer(capsule, BG_PLAN_CAPSULE) : NULL;
    const char *why = NULL;
    if (op != NULL && op->plan.kind != BG_PLAN_JSONL)
        why = "arrow_rows: a JSON lines plan";
    else if (single != 0 && single != 1)
        why = "arrow_rows: single is 0 or 1";
    else if (!a->json && (!PyTuple_Check(keys) || PyTuple_GET_SIZE(keys) != op->plan.ncols))
        why = "arrow_rows: keys, a name per column";
    for (int c = 0; why == NULL && op != NULL && c < op->plan.ncols; c++) {
        const bg_colplan *cp = &op->plan.cols[c];
        if (!a->json && !PyBytes_Check(PyTuple_GET_ITEM(keys, c)))
            why = "arrow_rows: the keys are bytes";
        else if (a->json && (cp->head_len < 2 || cp->head[cp->head_len - 1] != ' '))
            why = "arrow_rows: a plan's key ends with a space";
    }
    if (op == NULL || why != NULL) {
        PyBuffer_Release(&view);
        if (why != NULL)
            PyErr_SetString(PyExc_ValueError, why);
        return NULL;
    }
    bg_arrow_mark mark;
    bg_arrow_save(a, &mark);
    a->plan = &op->plan;
    a->keys = keys;
    a->single = single;
    a->open = -1;
    a->index = 0;
    int64_t r = bg_rows_each(&op->plan, (const uint8_t *)view.buf, (int64_t)view.len,
                             bg_arrow_each, a);
    PyBuffer_Release(&view);
    if (r >= 0 && bg_arrow_close(a) < 0)
        r = BG_NOMEM;
    if (r >= 0 && bg_arrow_full(a))
        r = BG_ARROW_FULL;
    a->open = -1;
    a->plan = NULL;
    a->keys = NULL;
    if (r < 0)
        bg_arrow_restore(a, &mark);
    if (r == BG_NOMEM)
        return PyErr_NoMemory();
    return PyLong_FromLongLong(r);
}

/* one image Python made: None, a str (json) or (keys, values), two sequences of str (map) */
static int bg_arrow_put_image(bg_arrow *a, int slot, PyObject *img)
{
    bg_arrow_img *im = &a->img[slot];
    Py_ssize_t n;
    const char *s;
    if (img == Py_None) {
        if (bg_arrow_none(a, slot) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        return 0;
    }
    if (a->json) {
        if ((s = PyUnicode_AsUTF8AndSize(img, &n)) == NULL)
            return -1;
        if (bg_buf_put(&im->valid, "\1", 1) < 0 || bg_buf_put(&im->vdata, s, (size_t)n) < 0 ||
                bg_arrow_i32(&im->off, (int64_t)im->vdata.n) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        return 0;
    }
    if (!PyTuple_Check(img) || PyTuple_GET_SIZE(img) != 2) {
        PyErr_SetString(PyExc_ValueError, "arrow_put: an image is None or (keys, values)");
        return -1;
    }
    PyObject *ks = PySequence_Fast(PyTuple_GET_ITEM(img, 0), "arrow_put: keys"), *vs = NULL;
    if (ks == NULL || (vs = PySequence_Fast(PyTuple_GET_ITEM(img, 1), "arrow_put: values")) == NULL ||
            PySequence_Fast_GET_SIZE(ks) != PySequence_Fast_GET_SIZE(vs)) {
        if (vs != NULL)
            PyErr_SetString(PyExc_ValueError, "arrow_put: as many keys as values");
        Py_XDECREF(ks);
        Py_XDECREF(vs);
        return -1;
    }
    int bad = bg_buf_put(&im->valid, "\1", 1) < 0;
    for (Py_ssize_t k = 0; !bad && k < PySequence_Fast_GET_SIZE(ks); k++) {
        PyObject *pair[2] = {PySequence_Fast_GET_ITEM(ks, k), PySequence_Fast_GET_ITEM(vs, k)};
        bg_buf *data[2] = {&im->kdata, &im->vdata}, *offs[2] = {&im->koff, &im->voff};
        for (int j = 0; j < 2 && !bad; j++) {
            if ((s = PyUnicode_AsUTF8AndSize(pair[j], &n)) == NULL)
                bad = 2;
            else if (bg_buf_put(data[j], s, (size_t)n) < 0 || bg_arrow_i32(offs[j], (int64_t)data[j]->n) < 0)
                bad = 1;
        }
        im->entries++;
    }
    Py_DECREF(ks);
    Py_DECREF(vs);
    if (!bad && bg_arrow_i32(&im->off, im->entries) < 0)
        bad = 1;
    if (bad == 1)
        PyErr_NoMemory();
    return bad ? -1 : 0;
}

PyDoc_STRVAR(arrow_put_doc,
"arrow_put(acc, before, after, row) -> None\n\n"
"A row Python made (the events arrow_rows refuses): each image None, a str (json), or (keys,\n"
"values) of str (map); row its index in its event.");

static PyObject *bg_py_arrow_put(PyObject *self, PyObject *args)
{
    PyObject *acc, *before, *after;
    long long row;
    if (!PyArg_ParseTuple(args, "OOOL", &acc, &before, &after, &row))
        return NULL;
    bg_arrow *a = bg_arrow_of(acc);
    if (a == NULL)
        return NULL;
    bg_arrow_mark mark;
    bg_arrow_save(a, &mark);
    if (bg_arrow_i32(&a->row, row) < 0) {
        bg_arrow_restore(a, &mark);
        return PyErr_NoMemory();
    }
    a->rows++;
    if (bg_arrow_put_image(a, 0, before) < 0 || bg_arrow_put_image(a, 1, after) < 0) {
        bg_arrow_restore(a, &mark);
        return NULL;
    }
    if (bg_arrow_full(a)) {
        bg_arrow_restore(a, &mark);
        PyErr_SetString(PyExc_OverflowError, "arrow_put: more than an int32 offset holds");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *bg_arrow_bytes(const bg_buf *b)
{
    return PyBytes_FromStringAndSize(b->p != NULL ? b->p : "", (Py_ssize_t)b->n);
}

/* an image's arrays: (null count, validity bitmap or None, offsets, then the map's entries,
 * keys' offsets, keys, values' offsets, values, or the json texts) */
static PyObject *bg_arrow_image(const bg_arrow *a, const bg_arrow_img *im)
{
    PyObject *validity = Py_NewRef(Py_None);
    if (im->nulls) {
        Py_DECREF(validity);
        validity = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((a->rows + 7) / 8));
        if (validity == NULL)
            return NULL;
        uint8_t *bits = (uint8_t *)PyBytes_AS_STRING(validity);
        memset(bits, 0, (size_t)((a->rows + 7) / 8));
        for (int64_t r = 0; r < a->rows; r++)
            if (im->valid.p[r])
                bits[r >> 3] |= (uint8_t)(1u << (r & 7));
    }
    if (a->json)
        return Py_BuildValue("(LNNN)", (long long)im->nulls, validity, bg_arrow_bytes(&im->off),
                             bg_arrow_bytes(&im->vdata));
    return Py_BuildValue("(LNNLNNNN)", (long long)im->nulls, validity, bg_arrow_bytes(&im->off),
                         (long long)im->entries, bg_arrow_bytes(&im->koff),
                         bg_arrow_bytes(&im->kdata), bg_arrow_bytes(&im->voff),
                         bg_arrow_bytes(&im->vdata));
}

PyDoc_STRVAR(arrow_take_doc,
"arrow_take(acc) -> (rows, row indexes as int32, before, after); the accumulator is emptied\n\n"
"Each image: (null count, validity bitmap or None, int32 offsets, then json: the texts; map:\n"
"entries, the keys' int32 offsets, keys, the values' int32 offsets, values).");

static PyObject *bg_py_arrow_take(PyObject *self, PyObject *args)
{
    PyObject *acc;
    if (!PyArg_ParseTuple(args, "O", &acc))
        return NULL;
    bg_arrow *a = bg_arrow_of(acc);
    if (a == NULL)
        return NULL;
    PyObject *before = bg_arrow_image(a, &a->img[0]);
    if (before == NULL)
        return NULL;
    PyObject *after = bg_arrow_image(a, &a->img[1]);
    if (after == NULL) {
        Py_DECREF(before);
        return NULL;
    }
    PyObject *out = Py_BuildValue("(LNNN)", (long long)a->rows, bg_arrow_bytes(&a->row), before,
                                  after);
    if (out == NULL)
        return NULL;
    if (bg_arrow_reset(a) < 0) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    return out;
}

#define BG_ARROW_METHODS \
    {"arrow_new", bg_py_arrow_new, METH_VARARGS, arrow_new_doc}, \
    {"arrow_rows", bg_py_arrow_rows, METH_VARARGS, arrow_rows_doc}, \
    {"arrow_put", bg_py_arrow_put, METH_VARARGS, arrow_put_doc}, \
    {"arrow_take", bg_py_arrow_take, METH_VARARGS, arrow_take_doc},

#endif
