/* The libFuzzer target of tools/fuzz_embed.py: a compiled loop that is driven from Python
 * (`stats`' loop, binlog_grammar.native._stats; the JSON-lines lane, native._jsonl_lane) called
 * straight from C on each input, in a Python embedded once. The extensions are built with clang
 * under -fsanitize=fuzzer-no-link,address,undefined (their edges guide the mutations; Python
 * itself is not instrumented); this program is linked with -fsanitize=fuzzer,address,undefined
 * and libpython. At start it imports tools/fuzz_embed.py and calls setup(FUZZ_EMBED_TARGET),
 * which learns each seed file's state the way the Python path teaches the loop (tables, ids,
 * plans, actions) and returns a function of one argument; each input is then given to it as a
 * read-only memoryview over libFuzzer's own buffer (exactly the input's size, so a read past its
 * end is AddressSanitizer's report). A Python exception from it aborts: libFuzzer keeps the input. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static PyObject *one;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    Py_InitializeEx(0);
    PyObject *mod = PyImport_ImportModule("fuzz_embed");
    const char *target = getenv("FUZZ_EMBED_TARGET");
    if (mod == NULL || target == NULL ||
            (one = PyObject_CallMethod(mod, "setup", "s", target)) == NULL) {
        if (PyErr_Occurred())
            PyErr_Print();
        fprintf(stderr, "fuzz_embed: no target (FUZZ_EMBED_TARGET=%s)\n", target ? target : "");
        abort();
    }
    Py_DECREF(mod);
    /* Python put its own SIGINT handler in (a KeyboardInterrupt inside the target, a finding);
     * libFuzzer keeps a handler it finds, so give it the default back: a Ctrl-C then stops the
     * run with libFuzzer's figures */
    signal(SIGINT, SIG_DFL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    PyObject *mv = PyMemoryView_FromMemory((char *)data, (Py_ssize_t)size, PyBUF_READ);
    PyObject *r = mv == NULL ? NULL : PyObject_CallOneArg(one, mv);
    if (r == NULL) {
        PyErr_Print();
        fprintf(stderr, "fuzz_embed: the target raised\n");
        abort();
    }
    Py_DECREF(r);
    if (Py_REFCNT(mv) != 1) {
        fprintf(stderr, "fuzz_embed: the target kept the input\n");
        abort();
    }
    Py_DECREF(mv);
    return 0;
}
