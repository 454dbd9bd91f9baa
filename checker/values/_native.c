/*
 * checker.values._native: the value model's hot paths in C (issue 47).
 *
 * The fingerprint of checker/values/hash64.py (version 3), computed by walking the
 * value directly (no encoding, no text, no sorting: sets and maps add up one term
 * per element), and the type-strict equality of checker/values/strict.py.  Both
 * follow the Python reference exactly; tests/test_native_values.py and
 * `make soundness` compare them on generated values.  Types the closed list does not
 * name are classified once, by the Python value model (kinds.kind_of), whose
 * StateValueError reaches the caller unchanged.
 *
 * State kept here is a cache of pure functions of types (their kind and class seed),
 * filled by setup() from checker/values/native.py: nothing of a run.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t u64;

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define SET_SALT 0x243F6A8885A308D3ULL
#define MAP_SALT 0x13198A2E03707344ULL
#define BAG_SALT 0xA4093822299F31D0ULL

static inline u64 fin(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline u64 step(u64 h, u64 w) { return fin((h ^ w) + GOLDEN); }

static u64 seed(u64 tag) { return fin(tag * 0xD6E8FEB86659FD93ULL); }

/* The kinds, numbered as checker.values.kinds.Kind. */
enum {
    K_INT = 0, K_BOOL, K_STR, K_NONE, K_MODEL, K_ENUM, K_TUPLE, K_PVECTOR,
    K_NAMEDTUPLE, K_DATACLASS, K_FROZENSET, K_PSET, K_MAP, K_PMAP, K_PBAG
};

static u64 S_INT, S_BOOL, S_STR, S_NONE, S_TUPLE, S_PVECTOR, S_FROZENSET, S_PSET,
    S_MAP, S_PMAP, S_BAG;

static PyTypeObject *T_model = NULL, *T_map = NULL, *T_pmap = NULL, *T_pset = NULL,
                    *T_pvector = NULL, *T_pbag = NULL;
/* kinds.kind_of-based classifier: type -> (kind, seed, fields or None). */
static PyObject *type_info_cb = NULL;
/* The fingerprint of an int beyond 64 bits (hash64.int_hash): rare, left to Python. */
static PyObject *big_int_cb = NULL;
static PyObject *info_cache = NULL; /* dict: type -> the classifier's tuple */
static PyObject *StateValueError = NULL;
static Py_ssize_t model_fp_offset = -1; /* ModelValue's `fp` slot */
static PyObject *s_buckets, *s_map, *s_counts, *s_items, *s_name, *s_keys, *s_values, *s_getitem;

/* ---- types ------------------------------------------------------------------- */

typedef struct {
    int kind;
    u64 seed;
    PyObject *fields; /* borrowed (kept alive by info_cache), dataclasses only */
} TypeInfo;

/* An int taken mod 2^64, read by its digits: Python's terms (a sum of terms may
 * exceed 2^64), and our own values in [0, 2^64), where the checked conversion
 * builds a byte array for every int above 2^30. */
static int u64_arg(PyObject *o, u64 *out) {
    *out = PyLong_AsUnsignedLongLongMask(o);
    return (*out == (u64)-1 && PyErr_Occurred()) ? -1 : 0;
}

static int type_info(PyTypeObject *t, TypeInfo *out) {
    out->seed = 0;
    out->fields = NULL;
    if (t == &PyLong_Type) { out->kind = K_INT; return 0; }
    if (t == &PyUnicode_Type) { out->kind = K_STR; return 0; }
    if (t == &PyTuple_Type) { out->kind = K_TUPLE; return 0; }
    if (t == T_model) { out->kind = K_MODEL; return 0; }
    if (t == &PyBool_Type) { out->kind = K_BOOL; return 0; }
    if (t == Py_TYPE(Py_None)) { out->kind = K_NONE; return 0; }
    if (t == &PyFrozenSet_Type) { out->kind = K_FROZENSET; return 0; }
    if (t == T_map) { out->kind = K_MAP; return 0; }
    if (t == T_pmap) { out->kind = K_PMAP; return 0; }
    if (t == T_pset) { out->kind = K_PSET; return 0; }
    if (t == T_pvector) { out->kind = K_PVECTOR; return 0; }
    if (t == T_pbag) { out->kind = K_PBAG; return 0; }
    PyObject *info = PyDict_GetItemWithError(info_cache, (PyObject *)t);
    if (info == NULL) {
        if (PyErr_Occurred()) return -1;
        PyObject *got = PyObject_CallOneArg(type_info_cb, (PyObject *)t);
        if (got == NULL) return -1; /* StateValueError, naming the type */
        if (!PyTuple_Check(got) || PyTuple_GET_SIZE(got) != 3) {
            Py_DECREF(got);
            PyErr_SetString(PyExc_SystemError, "type_info must return a 3-tuple");
            return -1;
        }
        if (PyDict_SetItem(info_cache, (PyObject *)t, got) < 0) { Py_DECREF(got); return -1; }
        Py_DECREF(got);
        info = PyDict_GetItemWithError(info_cache, (PyObject *)t);
        if (info == NULL) return -1;
    }
    out->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(info, 0));
    if (u64_arg(PyTuple_GET_ITEM(info, 1), &out->seed)) return -1; /* (the classifier's) */
    PyObject *f = PyTuple_GET_ITEM(info, 2);
    out->fields = (f == Py_None) ? NULL : f;
    if (PyErr_Occurred()) return -1;
    return 0;
}

/* ---- fingerprints ------------------------------------------------------------ */

static int str_hash(PyObject *s, u64 *out) {
    Py_ssize_t n;
    PyObject *tmp = NULL;
    const char *b = PyUnicode_AsUTF8AndSize(s, &n);
    if (b == NULL) { /* lone surrogates: as the reference, passed through */
        PyErr_Clear();
        tmp = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
        if (tmp == NULL) return -1;
        b = PyBytes_AS_STRING(tmp);
        n = PyBytes_GET_SIZE(tmp);
    }
    u64 h = S_STR;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        u64 w = 0;
        for (int j = 7; j >= 0; j--) w = (w << 8) | (unsigned char)b[i + j];
        h = step(h, w);
    }
    if (i < n) {
        u64 w = 0;
        for (Py_ssize_t j = n - 1; j >= i; j--) w = (w << 8) | (unsigned char)b[j];
        h = step(h, w);
    }
    Py_XDECREF(tmp);
    *out = step(h, (u64)n);
    return 0;
}

static int int_hash(PyObject *v, u64 *out) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (!overflow) {
        if (x == -1 && PyErr_Occurred()) return -1;
        *out = step(step(S_INT, (u64)x), 1);
        return 0;
    }
    PyObject *r = PyObject_CallOneArg(big_int_cb, v);
    if (r == NULL) return -1;
    *out = PyLong_AsUnsignedLongLong(r);
    Py_DECREF(r);
    return PyErr_Occurred() ? -1 : 0;
}

static int fp(PyObject *v, PyObject *ren, u64 *out);

static inline int model_fp(PyObject *v, PyObject *ren, u64 *out) {
    if (ren != NULL) {
        PyObject *r = PyDict_GetItemWithError(ren, v);
        if (r != NULL) v = r;
        else if (PyErr_Occurred()) return -1;
        if (Py_TYPE(v) != T_model) {
            PyErr_SetString(PyExc_TypeError, "a renaming maps model values to model values");
            return -1;
        }
    }
    PyObject *f = *(PyObject **)((char *)v + model_fp_offset);
    if (f == NULL) {
        PyErr_SetString(PyExc_AttributeError, "a model value without its fingerprint");
        return -1;
    }
    return u64_arg(f, out); /* (ModelValue's own, set once from hash64) */
}

/* Members of an iterable, hashed as a chain (ordered) starting from h. */
static int chain_iter(PyObject *it_src, PyObject *ren, u64 h, u64 *out) {
    PyObject *it = PyObject_GetIter(it_src);
    if (it == NULL) return -1;
    u64 n = 0, x;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        int bad = fp(item, ren, &x);
        Py_DECREF(item);
        if (bad) { Py_DECREF(it); return -1; }
        h = step(h, x);
        n++;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) return -1;
    *out = step(h, n);
    return 0;
}

static int chain_tuple(PyObject *v, PyObject *ren, u64 h, u64 *out) {
    Py_ssize_t n = PyTuple_GET_SIZE(v);
    u64 x;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (fp(PyTuple_GET_ITEM(v, i), ren, &x)) return -1;
        h = step(h, x);
    }
    *out = step(h, (u64)n);
    return 0;
}

static inline u64 close_sum(u64 start, u64 total, u64 size) {
    return step(step(start, total), size);
}

/* A set's members (any iterable) as a commutative sum. */
static int set_sum(PyObject *members, PyObject *ren, u64 start, u64 *out) {
    PyObject *it = PyObject_GetIter(members);
    if (it == NULL) return -1;
    u64 total = 0, n = 0, x;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        int bad = fp(item, ren, &x);
        Py_DECREF(item);
        if (bad) { Py_DECREF(it); return -1; }
        total += fin(x ^ SET_SALT);
        n++;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) return -1;
    *out = close_sum(start, total, n);
    return 0;
}

/* Calls f(key, value, ctx) for each entry of a pyrsistent pmap, read from its
 * buckets (a pvector of None or lists of (key, value) pairs). */
typedef int (*entry_fn)(PyObject *k, PyObject *x, void *ctx);

static int pmap_each(PyObject *m, entry_fn f, void *ctx) {
    PyObject *buckets = PyObject_GetAttr(m, s_buckets);
    if (buckets == NULL) return -1;
    PyObject *it = PyObject_GetIter(buckets);
    Py_DECREF(buckets);
    if (it == NULL) return -1;
    PyObject *b;
    while ((b = PyIter_Next(it)) != NULL) {
        if (b != Py_None) {
            PyObject *seq = PySequence_Fast(b, "a pmap bucket");
            if (seq == NULL) { Py_DECREF(b); Py_DECREF(it); return -1; }
            Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
            for (Py_ssize_t i = 0; i < n; i++) {
                PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
                if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                    PyErr_SetString(PyExc_TypeError, "a pmap bucket holds a non-pair");
                    Py_DECREF(seq); Py_DECREF(b); Py_DECREF(it);
                    return -1;
                }
                if (f(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), ctx)) {
                    Py_DECREF(seq); Py_DECREF(b); Py_DECREF(it);
                    return -1;
                }
            }
            Py_DECREF(seq);
        }
        Py_DECREF(b);
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

/* Calls f for each entry of an immutables.Map (through its items()). */
static int map_each(PyObject *m, entry_fn f, void *ctx) {
    PyObject *items = PyObject_CallMethodNoArgs(m, s_items);
    if (items == NULL) return -1;
    PyObject *it = PyObject_GetIter(items);
    Py_DECREF(items);
    if (it == NULL) return -1;
    PyObject *pair;
    while ((pair = PyIter_Next(it)) != NULL) {
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "a map's items() gave a non-pair");
            Py_DECREF(pair); Py_DECREF(it);
            return -1;
        }
        int bad = f(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), ctx);
        Py_DECREF(pair);
        if (bad) { Py_DECREF(it); return -1; }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

typedef struct {
    PyObject *ren;
    u64 total, n;
} SumCtx;

/* A map entry's share of the map's fingerprint: a chain, key then value. */
static inline u64 map_entry_hash(u64 key_fp, u64 value_fp) {
    return step(step(MAP_SALT, key_fp), value_fp);
}

static int map_entry_term(PyObject *k, PyObject *x, void *vctx) {
    SumCtx *c = (SumCtx *)vctx;
    u64 kf, xf;
    if (fp(k, c->ren, &kf) || fp(x, c->ren, &xf)) return -1;
    c->total += map_entry_hash(kf, xf);
    c->n++;
    return 0;
}

static int bag_entry_term(PyObject *k, PyObject *count, void *vctx) {
    SumCtx *c = (SumCtx *)vctx;
    u64 kf, cf;
    if (fp(k, c->ren, &kf) || int_hash(count, &cf)) return -1;
    c->total += step(step(BAG_SALT, kf), cf);
    c->n++;
    return 0;
}

static int pset_member_term(PyObject *k, PyObject *unused, void *vctx) {
    (void)unused;
    SumCtx *c = (SumCtx *)vctx;
    u64 kf;
    if (fp(k, c->ren, &kf)) return -1;
    c->total += fin(kf ^ SET_SALT);
    c->n++;
    return 0;
}

static int fp_container(PyObject *v, PyObject *ren, const TypeInfo *ti, u64 *out) {
    SumCtx c = {ren, 0, 0};
    switch (ti->kind) {
    case K_PVECTOR:
        return chain_iter(v, ren, S_PVECTOR, out);
    case K_NAMEDTUPLE:
        return chain_tuple(v, ren, ti->seed, out);
    case K_DATACLASS: {
        Py_ssize_t n = PyTuple_GET_SIZE(ti->fields);
        u64 h = ti->seed, x;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *a = PyObject_GetAttr(v, PyTuple_GET_ITEM(ti->fields, i));
            if (a == NULL) return -1;
            int bad = fp(a, ren, &x);
            Py_DECREF(a);
            if (bad) return -1;
            h = step(h, x);
        }
        *out = step(h, (u64)n);
        return 0;
    }
    case K_ENUM: {
        PyObject *name = PyObject_GetAttr(v, s_name);
        if (name == NULL) return -1;
        u64 x;
        int bad = PyUnicode_Check(name) ? str_hash(name, &x) : -1;
        if (bad && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "an enum member's name is not a str");
        Py_DECREF(name);
        if (bad) return -1;
        *out = step(ti->seed, x);
        return 0;
    }
    case K_FROZENSET:
        return set_sum(v, ren, S_FROZENSET, out);
    case K_PSET: {
        PyObject *m = PyObject_GetAttr(v, s_map);
        if (m == NULL) return -1;
        int bad = pmap_each(m, pset_member_term, &c);
        Py_DECREF(m);
        if (bad) return -1;
        *out = close_sum(S_PSET, c.total, c.n);
        return 0;
    }
    case K_MAP:
        if (map_each(v, map_entry_term, &c)) return -1;
        *out = close_sum(S_MAP, c.total, c.n);
        return 0;
    case K_PMAP:
        if (pmap_each(v, map_entry_term, &c)) return -1;
        *out = close_sum(S_PMAP, c.total, c.n);
        return 0;
    case K_PBAG: {
        PyObject *counts = PyObject_GetAttr(v, s_counts);
        if (counts == NULL) return -1;
        int bad = pmap_each(counts, bag_entry_term, &c);
        Py_DECREF(counts);
        if (bad) return -1;
        *out = close_sum(S_BAG, c.total, c.n);
        return 0;
    }
    default:
        PyErr_Format(PyExc_SystemError, "fingerprint: unexpected kind %d", ti->kind);
        return -1;
    }
}

static int fp(PyObject *v, PyObject *ren, u64 *out) {
    PyTypeObject *t = Py_TYPE(v);
    /* The leaves first, without a call. */
    if (t == &PyLong_Type) return int_hash(v, out);
    if (t == T_model) return model_fp(v, ren, out);
    if (t == &PyUnicode_Type) return str_hash(v, out);
    if (t == &PyBool_Type) { *out = step(S_BOOL, v == Py_True ? 1 : 0); return 0; }
    if (v == Py_None) { *out = S_NONE; return 0; }
    if (Py_EnterRecursiveCall(" while fingerprinting a state value")) return -1;
    int r;
    if (t == &PyTuple_Type) {
        r = chain_tuple(v, ren, S_TUPLE, out);
    } else {
        TypeInfo ti;
        r = type_info(t, &ti);
        if (r == 0) r = fp_container(v, ren, &ti, out);
    }
    Py_LeaveRecursiveCall();
    return r;
}

/* None or an empty mapping: no renaming; a dict: used as is. */
static int renaming_arg(PyObject *ren, PyObject **out) {
    if (ren == NULL || ren == Py_None) { *out = NULL; return 0; }
    if (!PyDict_Check(ren)) {
        PyErr_SetString(PyExc_TypeError, "a renaming is a dict of model values (or None)");
        return -1;
    }
    *out = PyDict_GET_SIZE(ren) ? ren : NULL;
    return 0;
}

static int ready(void) {
    if (info_cache == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "checker.values._native.setup() was not called");
        return 0;
    }
    return 1;
}

PyDoc_STRVAR(fingerprint_doc,
"fingerprint(value, renaming=None) -> int\n\n"
"The 64-bit fingerprint of a state value (checker.values.hash64), after renaming\n"
"model values by ``renaming`` (a dict, or None).");

static PyObject *py_fingerprint(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "fingerprint(value, renaming=None)");
        return NULL;
    }
    if (!ready()) return NULL;
    PyObject *ren;
    if (renaming_arg(nargs == 2 ? args[1] : NULL, &ren)) return NULL;
    u64 h;
    if (fp(args[0], ren, &h)) return NULL;
    return PyLong_FromUnsignedLongLong(h);
}

PyDoc_STRVAR(fingerprints_doc,
"fingerprints(value, renamings) -> tuple[int, ...]\n\n"
"The value's fingerprint under each renaming of a sequence (None or a dict each).");

static PyObject *py_fingerprints(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "fingerprints(value, renamings)");
        return NULL;
    }
    if (!ready()) return NULL;
    PyObject *seq = PySequence_Fast(args[1], "renamings must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *res = PyTuple_New(n);
    if (res == NULL) { Py_DECREF(seq); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *ren;
        u64 h;
        if (renaming_arg(PySequence_Fast_GET_ITEM(seq, i), &ren) || fp(args[0], ren, &h)) {
            Py_DECREF(seq); Py_DECREF(res);
            return NULL;
        }
        PyObject *x = PyLong_FromUnsignedLongLong(h);
        if (x == NULL) { Py_DECREF(seq); Py_DECREF(res); return NULL; }
        PyTuple_SET_ITEM(res, i, x);
    }
    Py_DECREF(seq);
    return res;
}

static int strict_eq(PyObject *a, PyObject *b);

/* ---- the per-variable terms of fingerprint.py ---------------------------------- */

static inline u64 mix_pos(u64 f, u64 position) {
    return fin(f ^ (GOLDEN * (position + 1)));
}

/* fingerprint.entry_term and element_term: one definition for every caller here. */
static inline u64 entry_term_c(u64 position, u64 key_fp, u64 value_fp) {
    return mix_pos(key_fp * GOLDEN + value_fp, position);
}

static inline u64 element_term_c(u64 position, u64 element_fp) {
    return mix_pos(element_fp, position + 12288);
}

PyDoc_STRVAR(mix_doc, "mix(fp, position) -> int: fingerprint.mix, in C.");

static PyObject *py_mix(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    u64 f, p;
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "mix(fp, position)"); return NULL; }
    if (u64_arg(args[0], &f) || u64_arg(args[1], &p)) return NULL;
    return PyLong_FromUnsignedLongLong(mix_pos(f, p));
}

PyDoc_STRVAR(entry_term_doc,
"entry_term(position, key_fp, value_fp) -> int: fingerprint.entry_term, in C.");

static PyObject *py_entry_term(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    u64 p, k, x;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "entry_term(position, key_fp, value_fp)");
        return NULL;
    }
    if (u64_arg(args[0], &p) || u64_arg(args[1], &k) || u64_arg(args[2], &x)) return NULL;
    return PyLong_FromUnsignedLongLong(entry_term_c(p, k, x));
}

PyDoc_STRVAR(element_term_doc,
"element_term(position, element_fp) -> int: fingerprint.element_term, in C.");

static PyObject *py_element_term(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    u64 p, e;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "element_term(position, element_fp)");
        return NULL;
    }
    if (u64_arg(args[0], &p) || u64_arg(args[1], &e)) return NULL;
    return PyLong_FromUnsignedLongLong(element_term_c(p, e));
}

/* The (key, value) pairs of a Map or pmap, in its iteration order, as a new list of
 * 2-tuples. */
static int append_pair(PyObject *k, PyObject *x, void *vlist) {
    PyObject *pair = PyTuple_Pack(2, k, x);
    if (pair == NULL) return -1;
    int r = PyList_Append((PyObject *)vlist, pair);
    Py_DECREF(pair);
    return r;
}

static PyObject *pairs_of(PyObject *m) {
    PyObject *list = PyList_New(0);
    if (list == NULL) return NULL;
    int bad = Py_TYPE(m) == T_pmap ? pmap_each(m, append_pair, list)
                                   : map_each(m, append_pair, list);
    if (bad) { Py_DECREF(list); return NULL; }
    return list;
}

/* ---- the parent's side, fingerprinted once per call ---------------------------- */

/* A successor shares most of its values with its parent, and a parent's successors
 * share the parent: a map one action changed one entry of is compared with the
 * parent's, and the parent's side of that comparison (its entries' fingerprints, its
 * own) is the same for every successor.  ParentMemo keeps it for one call, keyed by
 * the address of the parent's value: the parent holds every such value for the whole
 * call, so no other object can take the address, and a value of the value model does
 * not change (the Python loop checks the first expansions for actions that change
 * their input in place).  Only the parent's side goes in: a successor's value is new
 * and seen once. */

#define MEMO_RECS 256   /* records per call; past that, the parent's side is walked
                         * each time, as without a memo */
#define MEMO_SLOTS 512  /* open-addressed table of record indices, twice the records */
#define MEMO_PTERMS 64  /* the parent's variable terms kept as numbers, up to so many */
#define MEMO_SETS 4     /* the parent's frozenset variables whose member tables are kept */

/* Members' addresses, in an open-addressed table (a set variable's parent holds tens
 * of members; a Python set of ids would cost an int object per member). */
typedef struct {
    PyObject **slots;
    size_t mask;
    PyObject *small[128];
} PtrSet;

typedef struct {
    PyObject *obj;      /* the parent's value (borrowed: the parent holds it) */
    u64 fp;             /* its fingerprint, no renaming (a Map: once have_raw) */
    Py_ssize_t first;   /* an immutables.Map: its entries' index in the arena; else -1 */
    Py_ssize_t n;       /* an immutables.Map: its entries */
    u64 raw;            /* an immutables.Map: the sum of its entries' hashes ... */
    int have_raw;       /* ... once computed (a successor that only changed one
                         * entry of the parent's map needs that entry's fingerprint,
                         * not the map's) */
} MemoRec;

typedef struct {
    PyObject *key, *value;  /* borrowed: the map holds them */
    u64 kf, vf;             /* their fingerprints, once have */
    int have;
} MemoEntry;

typedef struct {
    MemoRec recs[MEMO_RECS];
    Py_ssize_t nrecs;
    short slots[MEMO_SLOTS];  /* a record's index + 1; 0 empty */
    MemoEntry *ents;
    Py_ssize_t nents, capents;
    /* The parent's variable terms as numbers (a successor keeps most of them), or
     * -1 before they are read; states of more variables read them each time. */
    Py_ssize_t npterms;
    u64 pterms[MEMO_PTERMS];
    /* The member tables of the parent's frozenset variables, built at the first
     * successor that changed one and kept for the others (keyed, like the records,
     * by the address of the parent's set, which the parent holds for the call). */
    PyObject *setobjs[MEMO_SETS];
    PtrSet sets[MEMO_SETS];
    int nsets;
} ParentMemo;

static void memo_init(ParentMemo *m) {
    m->npterms = -1;
    m->nrecs = 0;
    m->nsets = 0;
    memset(m->slots, 0, sizeof m->slots);
    m->ents = NULL;
    m->nents = m->capents = 0;
}

static void ptrset_free(PtrSet *s);

static void memo_free(ParentMemo *m) {
    PyMem_Free(m->ents);
    for (int i = 0; i < m->nsets; i++) ptrset_free(&m->sets[i]);
}

/* One memo kept between calls (NULL while a call holds it): a memo is some 17 KB, and
 * a malloc and free of it per expanded state showed in Go-Back-N's profile.  A call
 * that finds it taken (a nested one, from a spec's constraint) makes its own. */
static ParentMemo *memo_spare = NULL;

/* A memo on the heap (it is some 17 KB), where one runs out. */
static ParentMemo *memo_new(void) {
    ParentMemo *m = memo_spare;
    memo_spare = NULL;
    if (m == NULL) m = PyMem_Malloc(sizeof(ParentMemo));
    if (m == NULL) PyErr_NoMemory();
    else memo_init(m);
    return m;
}

static void memo_del(ParentMemo *m) {
    if (m == NULL) return;
    memo_free(m);
    if (memo_spare == NULL) memo_spare = m;
    else PyMem_Free(m);
}

/* An object's address, mixed: the home slot of the tables keyed by address (the
 * memo here, a set's member table below). */
static inline size_t addr_hash(PyObject *o) { return (size_t)fin((u64)(uintptr_t)o); }

static inline size_t memo_slot(PyObject *o) { return addr_hash(o) & (MEMO_SLOTS - 1); }

/* The record of o, or NULL. */
static MemoRec *memo_find(ParentMemo *m, PyObject *o) {
    size_t i = memo_slot(o);
    while (m->slots[i]) {
        MemoRec *r = &m->recs[m->slots[i] - 1];
        if (r->obj == o) return r;
        i = (i + 1) & (MEMO_SLOTS - 1);
    }
    return NULL;
}

/* A new record for o (not in the table), or NULL when the table is full. */
static MemoRec *memo_add(ParentMemo *m, PyObject *o) {
    if (m->nrecs == MEMO_RECS) return NULL;
    size_t i = memo_slot(o);
    while (m->slots[i]) i = (i + 1) & (MEMO_SLOTS - 1);
    MemoRec *r = &m->recs[m->nrecs++];
    m->slots[i] = (short)m->nrecs;
    r->obj = o;
    r->first = -1;
    r->n = 0;
    r->raw = 0;
    r->have_raw = 0;
    return r;
}

static int memo_reserve(ParentMemo *m, Py_ssize_t more) {
    if (m->nents + more <= m->capents) return 0;
    Py_ssize_t cap = m->capents ? m->capents : 64;
    while (cap < m->nents + more) cap *= 2;
    MemoEntry *e = PyMem_Realloc(m->ents, (size_t)cap * sizeof(MemoEntry));
    if (e == NULL) { PyErr_NoMemory(); return -1; }
    m->ents = e;
    m->capents = cap;
    return 0;
}

/* Leaves cost less to fingerprint than to look up. */
static inline int memo_leaf(PyObject *v) {
    PyTypeObject *t = Py_TYPE(v);
    return t == &PyLong_Type || t == &PyUnicode_Type || t == T_model || t == &PyBool_Type ||
           v == Py_None;
}

/* An immutables.Map's entries in its iteration order: its keys through its own
 * iterator, each value looked up by its very key object (no (key, value) pair built
 * per entry; the look-up cannot find another key, since the map holds one key equal
 * to the object and the object is that key).  The walk takes exactly len(map)
 * steps, so the iterator's end (an exception set and cleared) is never reached. */
typedef struct { PyObject *map, *keys; } MapWalk;

static int walk_start(MapWalk *w, PyObject *map) {
    w->map = map;
    w->keys = PyObject_GetIter(map);
    return w->keys == NULL ? -1 : 0;
}

/* 1 the next entry in *k and *v (new references); 0 declined: a key whose hash
 * changed since it went in (not a value of the value model; the caller's general
 * path names it); -1 an error, the map ending early included. */
static int walk_next(MapWalk *w, PyObject **k, PyObject **v) {
    *k = PyIter_Next(w->keys);
    if (*k == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "a map ended before its length");
        return -1;
    }
    *v = PyObject_GetItem(w->map, *k);
    if (*v != NULL) return 1;
    Py_DECREF(*k);
    if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
    PyErr_Clear();
    return 0;
}

static void walk_end(MapWalk *w) { Py_XDECREF(w->keys); }

static int memo_fp(ParentMemo *m, PyObject *y, u64 *out);

/* The record of an immutables.Map of the parent's, its keys and values listed once
 * (their fingerprints when asked for); NULL in *rec when the table is full or a key
 * cannot be looked up by its own object (the caller's general path names it).  -1 an
 * error. */
static int memo_map(ParentMemo *m, PyObject *y, MemoRec **rec) {
    MemoRec *r = memo_find(m, y);
    *rec = r != NULL && r->first >= 0 ? r : NULL;
    if (r != NULL || m->nrecs == MEMO_RECS) return 0;
    Py_ssize_t n = PyObject_Size(y);
    if (n < 0) return -1;
    if (memo_reserve(m, n)) return -1;
    Py_ssize_t first = m->nents, got = 0;
    MapWalk w;
    if (walk_start(&w, y)) return -1;
    PyObject *k, *v;
    int more = 1;
    while (got < n && (more = walk_next(&w, &k, &v)) == 1) {
        /* (borrowed once released: the map holds them) */
        Py_DECREF(k); Py_DECREF(v);
        MemoEntry *e = &m->ents[first + got++];
        e->key = k;
        e->value = v;
        e->have = 0;
    }
    walk_end(&w);
    if (more < 0) return -1;
    if (more == 0) return 0;  /* not memoised: the caller's general path names it */
    m->nents = first + got;
    r = memo_add(m, y);
    r->first = first;
    r->n = got;
    *rec = r;
    return 0;
}

/* The fingerprints of the j-th entry of a memo's map (index i in the arena). */
static int memo_entry(ParentMemo *m, Py_ssize_t i, u64 *kf, u64 *vf) {
    if (!m->ents[i].have) {
        u64 a, b;
        /* (m->ents may move while the value is walked: by index after it) */
        if (fp(m->ents[i].key, NULL, &a) || memo_fp(m, m->ents[i].value, &b)) return -1;
        m->ents[i].kf = a;
        m->ents[i].vf = b;
        m->ents[i].have = 1;
    }
    *kf = m->ents[i].kf;
    *vf = m->ents[i].vf;
    return 0;
}

/* The sum of a memo's map's entry hashes, and its fingerprint. */
static int memo_raw(ParentMemo *m, MemoRec *r) {
    if (r->have_raw) return 0;
    if (Py_EnterRecursiveCall(" while fingerprinting a state value")) return -1;
    u64 raw = 0, kf, vf;
    for (Py_ssize_t j = 0; j < r->n; j++) {
        if (memo_entry(m, r->first + j, &kf, &vf)) { Py_LeaveRecursiveCall(); return -1; }
        raw += map_entry_hash(kf, vf);
    }
    Py_LeaveRecursiveCall();
    r->raw = raw;
    r->fp = close_sum(S_MAP, raw, (u64)r->n);
    r->have_raw = 1;
    return 0;
}

/* The fingerprint of the parent's value y (no renaming), once per call. */
static int memo_fp(ParentMemo *m, PyObject *y, u64 *out) {
    if (memo_leaf(y)) return fp(y, NULL, out);
    MemoRec *r = memo_find(m, y);
    if (r == NULL && Py_TYPE(y) == T_map && memo_map(m, y, &r)) return -1;
    if (r != NULL) {
        if (r->first >= 0 && memo_raw(m, r)) return -1;
        *out = r->fp;
        return 0;
    }
    if (fp(y, NULL, out)) return -1;
    r = memo_add(m, y);
    if (r != NULL) r->fp = *out;
    return 0;
}

static int pair_fps(ParentMemo *m, PyObject *x, PyObject *y, u64 *fx, u64 *fy);

/* An immutables.Map x against the parent's map whose record is rec, entry by entry in
 * their iteration order: 1 when x has as many entries and the j-th key of each is the
 * very same object, with (where raw is not NULL) *raw the sum of x's entry hashes
 * (the parent's, adjusted by the values that are not the parent's very objects) and
 * (where term is not NULL) *term adjusted by their entry terms at position pos; 0
 * declined (other keys, or another number of them); -1 an error. */
static int map_against(ParentMemo *m, PyObject *x, MemoRec *rec, u64 pos, u64 *raw,
                       u64 *term) {
    Py_ssize_t n = PyObject_Size(x);
    if (n < 0) return -1;
    if (n != rec->n) return 0;
    if (raw != NULL && memo_raw(m, rec)) return -1;
    Py_ssize_t first = rec->first;  /* (rec itself stays put: records never move) */
    u64 sum = rec->raw, t = term ? *term : 0;
    MapWalk w;
    if (walk_start(&w, x)) return -1;
    int result = 1;
    PyObject *k, *v;
    for (Py_ssize_t j = 0; j < n && result == 1; j++) {
        result = walk_next(&w, &k, &v);
        if (result != 1) break;
        if (k != m->ents[first + j].key) {
            result = 0;  /* other keys: declined */
        } else if (v != m->ents[first + j].value) {
            u64 kf, yf, xf, yf2;
            if (memo_entry(m, first + j, &kf, &yf) ||
                pair_fps(m, v, m->ents[first + j].value, &xf, &yf2)) {
                result = -1;
            } else if (xf != yf) {
                sum += map_entry_hash(kf, xf) - map_entry_hash(kf, yf);
                t += entry_term_c(pos, kf, xf) - entry_term_c(pos, kf, yf);
            }
        }
        Py_DECREF(k); Py_DECREF(v);
    }
    walk_end(&w);
    if (result == 1) {
        if (raw) *raw = sum;
        if (term) *term = t;
    }
    return result;
}

/* The fingerprints of x and of the parent's y (no renaming), sharing the work where
 * x is y or both are immutables.Map with the same keys: x's entries that are the
 * parent's very values cost nothing (a map of maps one action changed one inner entry
 * of costs that entry and a walk of the two maps, not their values again). */
static int pair_fps(ParentMemo *m, PyObject *x, PyObject *y, u64 *fx, u64 *fy) {
    if (x == y) {
        if (memo_fp(m, y, fy)) return -1;
        *fx = *fy;
        return 0;
    }
    if (Py_TYPE(x) == T_map && Py_TYPE(y) == T_map) {
        MemoRec *rec;
        if (memo_map(m, y, &rec)) return -1;
        if (rec != NULL) {
            u64 raw;
            if (Py_EnterRecursiveCall(" while fingerprinting a state value")) return -1;
            int r = map_against(m, x, rec, 0, &raw, NULL);
            Py_LeaveRecursiveCall();
            if (r < 0) return -1;
            if (r == 1) {
                *fx = close_sum(S_MAP, raw, (u64)rec->n);
                *fy = rec->fp;
                return 0;
            }
        }
    }
    return fp(x, NULL, fx) || memo_fp(m, y, fy) ? -1 : 0;
}

/* One entry whose value changed from y to x (the key's very object in both maps):
 * the term adjusted by the two values' entry terms (nothing when they are the same
 * value: equal fingerprints; no strict == first, which cost as much as a
 * fingerprint where the values differ, the common case). */
static int adjust_entry(ParentMemo *m, u64 pos, PyObject *k, PyObject *x, PyObject *y,
                        u64 *term) {
    if (x == y) return 0;
    u64 kf, xf, yf;
    if (pair_fps(m, x, y, &xf, &yf)) return -1;
    if (xf == yf) return 0;
    if (fp(k, NULL, &kf)) return -1;
    *term += entry_term_c(pos, kf, xf) - entry_term_c(pos, kf, yf);
    return 0;
}

/* The term of a map variable from its parent's (see map_update's doc): 1 done, 0
 * declined (not two maps of one type with the very same keys in order), -1 error. */
static int map_update_c(ParentMemo *m, u64 pos, PyObject *new, PyObject *old, u64 *term) {
    PyTypeObject *t = Py_TYPE(new);
    if (t != Py_TYPE(old) || (t != T_map && t != T_pmap)) return 0;
    if (t == T_map) {
        MemoRec *rec;
        if (memo_map(m, old, &rec)) return -1;
        if (rec == NULL && m->nrecs < MEMO_RECS) return 0;  /* a key it cannot look up */
        if (rec == NULL) {
            /* The table is full: walk the parent's map in a memo of its own. */
            ParentMemo *own = memo_new();
            if (own == NULL) return -1;
            int r = map_update_c(own, pos, new, old, term);
            memo_del(own);
            return r;
        }
        return map_against(m, new, rec, pos, NULL, term);
    }
    PyObject *a = pairs_of(new);
    if (a == NULL) return -1;
    PyObject *b = pairs_of(old);
    if (b == NULL) { Py_DECREF(a); return -1; }
    int result = 0;
    u64 sum = *term;
    Py_ssize_t n = PyList_GET_SIZE(a);
    if (n != PyList_GET_SIZE(b)) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pa = PyList_GET_ITEM(a, i), *pb = PyList_GET_ITEM(b, i);
        if (PyTuple_GET_ITEM(pa, 0) != PyTuple_GET_ITEM(pb, 0)) goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pa = PyList_GET_ITEM(a, i), *pb = PyList_GET_ITEM(b, i);
        if (adjust_entry(m, pos, PyTuple_GET_ITEM(pa, 0), PyTuple_GET_ITEM(pa, 1),
                         PyTuple_GET_ITEM(pb, 1), &sum)) {
            result = -1;
            goto done;
        }
    }
    *term = sum;
    result = 1;
done:
    Py_DECREF(a);
    Py_DECREF(b);
    return result;
}

PyDoc_STRVAR(map_update_doc,
"map_update(position, new, old, old_term) -> int | None\n\n"
"The term of a map-valued variable (fingerprint.variable_term, no renaming) from its\n"
"parent's: when new and old are maps of one type whose keys are the very same\n"
"objects in the same order (a map one action changed some values of), adjusted by\n"
"the values that are not the same value; None when the keys differ (the caller\n"
"takes its general path).");

/* A term update (map_update_c, set_update_c) called from Python: (position, new,
 * old, old_term) -> the term, or None where it declines. */
typedef int (*term_update_fn)(ParentMemo *m, u64 pos, PyObject *new, PyObject *old,
                              u64 *term);

static PyObject *term_update_call(PyObject *const *args, Py_ssize_t nargs, term_update_fn f,
                                  const char *usage) {
    u64 pos, term;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    if (!ready()) return NULL;
    if (u64_arg(args[0], &pos) || u64_arg(args[3], &term)) return NULL;
    ParentMemo m; /* (on the stack: a call from Python is one comparison) */
    memo_init(&m);
    int r = f(&m, pos, args[1], args[2], &term);
    memo_free(&m);
    if (r < 0) return NULL;
    if (r == 0) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(term);
}

static PyObject *py_map_update(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return term_update_call(args, nargs, map_update_c, "map_update(position, new, old, old_term)");
}

/* ---- a set variable's term from its parent's ------------------------------------ */


static int ptrset_init(PtrSet *s, Py_ssize_t n) {
    size_t size = 16;
    while (size < (size_t)n * 2) size <<= 1;
    if (size <= 128) {
        s->slots = s->small;
    } else {
        s->slots = PyMem_Malloc(size * sizeof(PyObject *));
        if (s->slots == NULL) { PyErr_NoMemory(); return -1; }
    }
    memset(s->slots, 0, size * sizeof(PyObject *));
    s->mask = size - 1;
    return 0;
}

static void ptrset_free(PtrSet *s) {
    if (s->slots != s->small) PyMem_Free(s->slots);
}

static inline size_t ptr_slot(const PtrSet *s, PyObject *p) { return addr_hash(p) & s->mask; }

static void ptrset_add(PtrSet *s, PyObject *p) {
    size_t i = ptr_slot(s, p);
    while (s->slots[i] != NULL && s->slots[i] != p) i = (i + 1) & s->mask;
    s->slots[i] = p;
}

static int ptrset_has(const PtrSet *s, PyObject *p) {
    size_t i = ptr_slot(s, p);
    while (s->slots[i] != NULL) {
        if (s->slots[i] == p) return 1;
        i = (i + 1) & s->mask;
    }
    return 0;
}

/* A frozenset's members, borrowed (the set holds them and never changes): read off
 * its table where the C API still offers that (before 3.13, which made
 * _PySet_NextEntry internal), with no iterator object and no reference counted per
 * member; else through its iterator. */
typedef struct {
    PyObject *set, *it;
    Py_ssize_t pos;
} SetWalk;

static int setwalk_start(SetWalk *w, PyObject *set) {
    w->set = set;
    w->pos = 0;
#if PY_VERSION_HEX < 0x030D0000
    w->it = NULL;
    return 0;
#else
    w->it = PyObject_GetIter(set);
    return w->it == NULL ? -1 : 0;
#endif
}

/* 1 and the next member in *x; 0 at the end; -1 an error. */
static int setwalk_next(SetWalk *w, PyObject **x) {
#if PY_VERSION_HEX < 0x030D0000
    Py_hash_t unused;
    return _PySet_NextEntry(w->set, &w->pos, x, &unused);
#else
    PyObject *o = PyIter_Next(w->it);
    if (o == NULL) return PyErr_Occurred() ? -1 : 0;
    Py_DECREF(o); /* (the frozenset holds it) */
    *x = o;
    return 1;
#endif
}

static void setwalk_end(SetWalk *w) { Py_XDECREF(w->it); }

/* The members of frozenset `set` into a table of addresses (the set keeps them
 * alive). */
static int ptrset_fill(PtrSet *s, PyObject *set) {
    if (ptrset_init(s, PySet_GET_SIZE(set))) return -1;
    SetWalk w;
    if (setwalk_start(&w, set)) { ptrset_free(s); return -1; }
    PyObject *x;
    int r;
    while ((r = setwalk_next(&w, &x)) == 1) ptrset_add(s, x);
    setwalk_end(&w);
    if (r < 0) { ptrset_free(s); return -1; }
    return 0;
}

/* *sum plus (sign > 0) or minus the element terms of the members of frozenset `set`
 * that are not in `others` by address; `shared` counts those that are. */
static int set_side(u64 pos, PyObject *set, const PtrSet *others, int sign, u64 *sum,
                    Py_ssize_t *shared) {
    SetWalk w;
    if (setwalk_start(&w, set)) return -1;
    PyObject *x;
    int r, bad = 0;
    while (!bad && (r = setwalk_next(&w, &x)) == 1) {
        if (ptrset_has(others, x)) {
            (*shared)++;
        } else {
            u64 f;
            if (fp(x, NULL, &f)) bad = 1;
            else if (sign > 0) *sum += element_term_c(pos, f);
            else *sum -= element_term_c(pos, f);
        }
    }
    setwalk_end(&w);
    return bad || r < 0 ? -1 : 0;
}

/* The member table of the parent's set `old`: the memo's, built once per call (every
 * successor that changes the variable compares with the same parent's set), else,
 * with the memo's tables taken, `local`, filled here for the caller to free. */
static const PtrSet *parent_members(ParentMemo *m, PyObject *old, PtrSet *local, int *own) {
    *own = 0;
    for (int i = 0; i < m->nsets; i++)
        if (m->setobjs[i] == old) return &m->sets[i];
    PtrSet *s = m->nsets < MEMO_SETS ? &m->sets[m->nsets] : local;
    if (ptrset_fill(s, old)) return NULL;
    if (s == local) *own = 1;
    else m->setobjs[m->nsets++] = old;
    return s;
}

/* The term of a frozenset variable from its parent's.  A set's term is its tag plus
 * one element term per member, so the new set's is the parent's plus the terms of
 * its members that are not the parent's very objects, minus those of the parent's
 * members that are not its own: no == at all (a member swapped for a Python-equal
 * twin is one term out and one in; a strictly equal copy, the same term out and in).
 * Set operations keep the members' objects, so an action that added or took a
 * member pays for that member only.  1 done, 0 declined (not two frozensets), -1 an
 * error. */
static int set_update_c(ParentMemo *m, u64 pos, PyObject *new, PyObject *old, u64 *term) {
    if (Py_TYPE(new) != &PyFrozenSet_Type || Py_TYPE(old) != &PyFrozenSet_Type) return 0;
    PtrSet local;
    int own;
    const PtrSet *olds = parent_members(m, old, &local, &own);
    if (olds == NULL) return -1;
    u64 sum = *term;
    Py_ssize_t kept = 0, unused = 0;
    int bad = set_side(pos, new, olds, 1, &sum, &kept);
    if (own) ptrset_free(&local);
    if (bad) return -1;
    if (kept < PySet_GET_SIZE(old)) { /* (a set that only grew has none removed) */
        PtrSet news;
        if (ptrset_fill(&news, new)) return -1;
        bad = set_side(pos, old, &news, -1, &sum, &unused);
        ptrset_free(&news);
        if (bad) return -1;
    }
    *term = sum;
    return 1;
}

PyDoc_STRVAR(set_update_doc,
"set_update(position, new, old, old_term) -> int | None\n\n"
"The term of a frozenset-valued variable (fingerprint.variable_term, no renaming)\n"
"from its parent's: adjusted by the members of each that are not the other's very\n"
"objects; None when new and old are not both frozensets.");

static PyObject *py_set_update(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return term_update_call(args, nargs, set_update_c, "set_update(position, new, old, old_term)");
}

/* Kinds whose variable term is not the position-mixed fingerprint of the value. */
static inline int collection_kind(int kind) {
    return kind == K_MAP || kind == K_PMAP || kind == K_FROZENSET || kind == K_PSET;
}

PyDoc_STRVAR(child_terms_doc,
"child_terms(vals, pvals, pterms, update) -> (total, terms)\n\n"
"StateFingerprinter.child without renamings, in C: per variable the parent's term\n"
"when the value is the parent's very object; else the position-mixed fingerprint of\n"
"a value that is not a set or map; a map's term updated from the parent's where the\n"
"keys are the very same objects (map_update), a frozenset's by the members that are\n"
"not the parent's very objects (set_update); otherwise update(position, value,\n"
"parent value, parent term), the Python calculator.  total is the terms' sum mod 2^64.");

/* A new reference to a tuple holding the sequence's items: the object itself when
   it is a tuple, or a NamedTuple state whose items and iteration are the tuple's own
   (what indexing and iterating it in Python give), so the state is not copied for
   every successor; otherwise a copy made by iterating it. */
/* Whether a tuple subclass's items are what indexing and iterating it in Python give:
 * its tp_iter and mp_subscript are tuple's, and so is its sq_item or, where a class
 * statement gave it the generic slot that calls __getitem__ (every tuple subclass
 * written in Python, a NamedTuple among them, gets that slot: tuple's __getitem__
 * wraps mp_subscript, not sq_item), the __getitem__ its MRO finds is tuple's own.
 * The last type found so is kept (held), so the look-up runs once per state type. */
static PyTypeObject *reads_as_tuple_seen = NULL;

static int reads_as_tuple(PyTypeObject *t) {
    if (t == reads_as_tuple_seen) return 1;
    if (t->tp_iter != PyTuple_Type.tp_iter || t->tp_as_sequence == NULL ||
        t->tp_as_mapping == NULL ||
        t->tp_as_mapping->mp_subscript != PyTuple_Type.tp_as_mapping->mp_subscript)
        return 0;
    if (t->tp_as_sequence->sq_item != PyTuple_Type.tp_as_sequence->sq_item) {
        PyObject *mine = PyObject_GetAttr((PyObject *)t, s_getitem);
        if (mine == NULL) { PyErr_Clear(); return 0; }
        PyObject *base = PyObject_GetAttr((PyObject *)&PyTuple_Type, s_getitem);
        int same = mine == base;
        Py_DECREF(mine);
        Py_XDECREF(base);
        if (base == NULL) PyErr_Clear();
        if (!same) return 0;
    }
    Py_INCREF(t);
    Py_XSETREF(reads_as_tuple_seen, t);
    return 1;
}

static PyObject *as_tuple(PyObject *seq) {
    PyTypeObject *t = Py_TYPE(seq);
    if (t == &PyTuple_Type || (PyTuple_Check(seq) && reads_as_tuple(t)))
        return Py_NewRef(seq);
    return PySequence_Tuple(seq);
}

PyDoc_STRVAR(tuple_view_doc,
"tuple_view(seq) -> tuple\n\n"
"The tuple the C loops read a state's variables from: the state itself where it is\n"
"a tuple whose indexing and iteration in Python are the tuple's own (a NamedTuple),\n"
"else a copy made by iterating it.");

static PyObject *py_tuple_view(PyObject *self, PyObject *seq) {
    (void)self;
    return as_tuple(seq);
}

/* The loop of child_terms over three tuples of one length, as numbers: each
   variable's term in hs[i] (same[i] set where it is the parent's, unchanged), their
   sum in *total; -1 on an error.  Nothing is built: a successor the visited set
   already holds needs no term objects (see child_candidates). */
static int child_terms_raw(ParentMemo *m, PyObject *vals, PyObject *pvals, PyObject *pterms,
                           PyObject *update, u64 *hs, unsigned char *same, u64 *total_out) {
    Py_ssize_t n = PyTuple_GET_SIZE(vals);
    if (PyTuple_GET_SIZE(pvals) != n || PyTuple_GET_SIZE(pterms) != n) {
        PyErr_SetString(PyExc_ValueError, "child_terms: the sequences differ in length");
        return -1;
    }
    if (m->npterms < 0 && n <= MEMO_PTERMS) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (u64_arg(PyTuple_GET_ITEM(pterms, i), &m->pterms[i])) return -1;
        m->npterms = n;
    }
    const u64 *ptc = m->npterms == n ? m->pterms : NULL;
    u64 total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(vals, i), *pv = PyTuple_GET_ITEM(pvals, i);
        u64 h, pth;
        if (ptc != NULL) pth = ptc[i];
        else if (u64_arg(PyTuple_GET_ITEM(pterms, i), &pth)) return -1;
        same[i] = v == pv;
        if (v == pv) {
            h = pth;
        } else {
            TypeInfo ti; /* (the builtin kinds by pointer, before any lookup) */
            if (type_info(Py_TYPE(v), &ti)) return -1;
            int kind = ti.kind;
            if (!collection_kind(kind)) {
                if (fp(v, NULL, &h)) return -1;
                h = mix_pos(h, (u64)i);
            } else {
                int r = 0;
                h = pth;
                if (kind == K_MAP || kind == K_PMAP) {
                    r = map_update_c(m, (u64)i, v, pv, &h);
                    if (r < 0) return -1;
                } else if (kind == K_FROZENSET) {
                    r = set_update_c(m, (u64)i, v, pv, &h);
                    if (r < 0) return -1;
                }
                if (r != 1) {
                    PyObject *pos = PyLong_FromSsize_t(i);
                    if (pos == NULL) return -1;
                    PyObject *cargs[4] = {pos, v, pv, PyTuple_GET_ITEM(pterms, i)};
                    PyObject *term = PyObject_Vectorcall(update, cargs, 4, NULL);
                    Py_DECREF(pos);
                    if (term == NULL) return -1;
                    int bad = u64_arg(term, &h);
                    Py_DECREF(term);
                    if (bad) return -1;
                }
            }
        }
        hs[i] = h;
        total += h;
    }
    *total_out = total;
    return 0;
}

/* The tuple of a successor's terms from child_terms_raw's numbers: the parent's own
   term object where the variable is unchanged (shared, as the parent's handle holds
   it), a new int otherwise (a term taken mod 2^64: the fingerprint is their sum mod
   2^64, and a child's terms are read mod 2^64 again). */
static PyObject *terms_tuple(Py_ssize_t n, const u64 *hs, const unsigned char *same,
                             PyObject *pterms) {
    PyObject *terms = PyTuple_New(n);
    if (terms == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *term = same[i] ? Py_NewRef(PyTuple_GET_ITEM(pterms, i))
                                 : PyLong_FromUnsignedLongLong(hs[i]);
        if (term == NULL) { Py_DECREF(terms); return NULL; }
        PyTuple_SET_ITEM(terms, i, term);
    }
    return terms;
}

/* Room for one successor's terms: on the stack for most states, else the heap. */
#define TERMS_ON_STACK 64
typedef struct {
    u64 hs_stack[TERMS_ON_STACK];
    unsigned char same_stack[TERMS_ON_STACK];
    u64 *hs;
    unsigned char *same;
    Py_ssize_t cap;
} TermsBuf;

static int termsbuf_fit(TermsBuf *b, Py_ssize_t n) {
    if (b->hs == NULL) { b->hs = b->hs_stack; b->same = b->same_stack; b->cap = TERMS_ON_STACK; }
    if (n <= b->cap) return 0;
    u64 *hs = PyMem_Malloc((size_t)n * sizeof(u64));
    unsigned char *same = PyMem_Malloc((size_t)n);
    if (hs == NULL || same == NULL) { PyMem_Free(hs); PyMem_Free(same); PyErr_NoMemory(); return -1; }
    if (b->hs != b->hs_stack) { PyMem_Free(b->hs); PyMem_Free(b->same); }
    b->hs = hs; b->same = same; b->cap = n;
    return 0;
}

static void termsbuf_free(TermsBuf *b) {
    if (b->hs != NULL && b->hs != b->hs_stack) { PyMem_Free(b->hs); PyMem_Free(b->same); }
}

/* child_terms_raw then terms_tuple: a new tuple of the successor's terms, their sum
   in *total; NULL on an error. */
static PyObject *child_terms_core(ParentMemo *m, PyObject *vals, PyObject *pvals,
                                  PyObject *pterms, PyObject *update, u64 *total_out) {
    TermsBuf b = {.hs = NULL};
    PyObject *terms = NULL;
    if (termsbuf_fit(&b, PyTuple_GET_SIZE(vals)) == 0
        && child_terms_raw(m, vals, pvals, pterms, update, b.hs, b.same, total_out) == 0)
        terms = terms_tuple(PyTuple_GET_SIZE(vals), b.hs, b.same, pterms);
    termsbuf_free(&b);
    return terms;
}

static PyObject *py_child_terms(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "child_terms(vals, pvals, pterms, update)");
        return NULL;
    }
    if (!ready()) return NULL;
    /* (Tuples, or NamedTuples, from every model here; any sequence is taken.) */
    PyObject *vals = as_tuple(args[0]), *pvals = NULL, *pterms = NULL, *res = NULL;
    if (vals) pvals = as_tuple(args[1]);
    if (pvals) pterms = as_tuple(args[2]);
    if (pterms != NULL) {
        ParentMemo m;
        memo_init(&m);
        u64 total;
        PyObject *terms = child_terms_core(&m, vals, pvals, pterms, args[3], &total);
        memo_free(&m);
        if (terms != NULL) {
            PyObject *total_obj = PyLong_FromUnsignedLongLong(total);
            if (total_obj != NULL) res = PyTuple_Pack(2, total_obj, terms);
            Py_XDECREF(total_obj);
            Py_DECREF(terms);
        }
    }
    Py_XDECREF(vals); Py_XDECREF(pvals); Py_XDECREF(pterms);
    return res;
}

/* ---- packed lanes (fingerprint.Lanes): one 10-byte lane per renaming ----------- */

#define LANE_BYTES 10

#if PY_VERSION_HEX >= 0x030D0000
#define LONG_AS_BYTES(v, b, n) _PyLong_AsByteArray((PyLongObject *)(v), (b), (n), 1, 0, 1)
#else
#define LONG_AS_BYTES(v, b, n) _PyLong_AsByteArray((PyLongObject *)(v), (b), (n), 1, 0)
#endif

/* A packed vector's lanes, each mod 2^64 (Lanes.split). */
static int lanes_read(PyObject *packed, Py_ssize_t n, unsigned char *buf, u64 *out) {
    if (!PyLong_Check(packed)) {
        PyErr_SetString(PyExc_TypeError, "a packed vector is an int");
        return -1;
    }
    if (LONG_AS_BYTES(packed, buf, (size_t)(n * LANE_BYTES)) < 0) return -1;
    for (Py_ssize_t r = 0; r < n; r++) {
        u64 x = 0;
        for (int b = 7; b >= 0; b--) x = (x << 8) | buf[r * LANE_BYTES + b];
        out[r] = x;
    }
    return 0;
}

/* The packed vector of lanes (Lanes.pack, each lane < 2^64). */
static PyObject *lanes_make(const u64 *lanes, Py_ssize_t n, unsigned char *buf) {
    for (Py_ssize_t r = 0; r < n; r++) {
        u64 x = lanes[r];
        for (int b = 0; b < 8; b++) { buf[r * LANE_BYTES + b] = (unsigned char)(x & 0xFF); x >>= 8; }
        buf[r * LANE_BYTES + 8] = buf[r * LANE_BYTES + 9] = 0;
    }
    return _PyLong_FromByteArray(buf, (size_t)(n * LANE_BYTES), 1, 0);
}

/* The renamings of a sequence, each NULL (none) or a dict, as a new array. */
static PyObject **renamings_of(PyObject *seq, Py_ssize_t *n) {
    *n = PySequence_Fast_GET_SIZE(seq);
    PyObject **rens = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof(PyObject *));
    if (rens == NULL) { PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t r = 0; r < *n; r++) {
        if (renaming_arg(PySequence_Fast_GET_ITEM(seq, r), &rens[r])) {
            PyMem_Free(rens);
            return NULL;
        }
    }
    return rens;
}

/* What a lanes_* call works with: the renamings, and a lane and byte buffer each. */
typedef struct {
    PyObject *seq;
    PyObject **rens;
    Py_ssize_t n;
    u64 *lanes;
    unsigned char *buf;
} LaneWork;

static void lanes_end(LaneWork *w) {
    PyMem_Free(w->lanes);
    PyMem_Free(w->buf);
    PyMem_Free(w->rens);
    Py_XDECREF(w->seq);
}

static int lanes_begin(LaneWork *w, PyObject *renamings) {
    *w = (LaneWork){NULL, NULL, 0, NULL, NULL};
    w->seq = PySequence_Fast(renamings, "renamings must be a sequence");
    if (w->seq == NULL) return -1;
    w->rens = renamings_of(w->seq, &w->n);
    if (w->rens == NULL) { lanes_end(w); return -1; }
    w->lanes = PyMem_Malloc((size_t)(w->n ? w->n : 1) * sizeof(u64));
    w->buf = PyMem_Malloc((size_t)(w->n ? w->n : 1) * LANE_BYTES);
    if (w->lanes == NULL || w->buf == NULL) { PyErr_NoMemory(); lanes_end(w); return -1; }
    return 0;
}

/* Adds sign * the term of each member (set) or (key, value) pair (map) of items to
 * every lane. */
static int lanes_add(PyObject *items, int pairs, int sign, u64 pos, PyObject **rens,
                     Py_ssize_t n, u64 *lanes) {
    if (items == Py_None) return 0;
    PyObject *it = PyObject_GetIter(items);
    if (it == NULL) return -1;
    PyObject *x;
    while ((x = PyIter_Next(it)) != NULL) {
        for (Py_ssize_t r = 0; r < n; r++) {
            u64 term, a, b;
            if (pairs) {
                if (!PyTuple_Check(x) || PyTuple_GET_SIZE(x) != 2) {
                    PyErr_SetString(PyExc_TypeError, "lanes_adjust: a map's change is a pair");
                    goto bad;
                }
                if (fp(PyTuple_GET_ITEM(x, 0), rens[r], &a) ||
                    fp(PyTuple_GET_ITEM(x, 1), rens[r], &b))
                    goto bad;
                term = entry_term_c(pos, a, b);
            } else {
                if (fp(x, rens[r], &a)) goto bad;
                term = element_term_c(pos, a);
            }
            lanes[r] = sign > 0 ? lanes[r] + term : lanes[r] - term;
        }
        Py_DECREF(x);
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
bad:
    Py_DECREF(x);
    Py_DECREF(it);
    return -1;
}

PyDoc_STRVAR(lanes_adjust_doc,
"lanes_adjust(position, old_term, renamings, added, removed, plus, minus) -> int\n\n"
"TermCalculator._adjust under renamings, in C: the packed term of a set variable with\n"
"the members added and removed (plus and minus None), or of a map variable with the\n"
"(key, value) pairs plus and minus (added and removed None), each lane adjusted by\n"
"the member's or entry's term under its renaming.");

static PyObject *py_lanes_adjust(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    u64 pos;
    LaneWork w;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError,
                        "lanes_adjust(position, old_term, renamings, added, removed, plus, minus)");
        return NULL;
    }
    if (!ready() || u64_arg(args[0], &pos) || lanes_begin(&w, args[2])) return NULL;
    PyObject *res = NULL;
    if (!lanes_read(args[1], w.n, w.buf, w.lanes) &&
        !lanes_add(args[3], 0, 1, pos, w.rens, w.n, w.lanes) &&
        !lanes_add(args[4], 0, -1, pos, w.rens, w.n, w.lanes) &&
        !lanes_add(args[5], 1, 1, pos, w.rens, w.n, w.lanes) &&
        !lanes_add(args[6], 1, -1, pos, w.rens, w.n, w.lanes))
        res = lanes_make(w.lanes, w.n, w.buf);
    lanes_end(&w);
    return res;
}

PyDoc_STRVAR(lanes_scalar_doc,
"lanes_scalar(position, value, renamings) -> int\n\n"
"TermCalculator._scalar under renamings, in C: the packed vector of the value's\n"
"position-mixed fingerprint under each renaming.");

static PyObject *py_lanes_scalar(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    u64 pos;
    LaneWork w;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "lanes_scalar(position, value, renamings)");
        return NULL;
    }
    if (!ready() || u64_arg(args[0], &pos) || lanes_begin(&w, args[2])) return NULL;
    PyObject *res = NULL;
    Py_ssize_t r = 0;
    for (; r < w.n; r++) {
        u64 h;
        if (fp(args[1], w.rens[r], &h)) break;
        w.lanes[r] = mix_pos(h, pos);
    }
    if (r == w.n) res = lanes_make(w.lanes, w.n, w.buf);
    lanes_end(&w);
    return res;
}

/* ---- the successors of a state (CompiledSpec._successors_of) ------------------- */

/* The failure of one action instance, for the caller to raise as its Python loop
 * would: (kind, name, params, value) with kind "error" (value: the exception, its
 * traceback kept) or "wrong" (value: what the action returned instead of a state). */
static PyObject *failure(const char *kind, PyObject *name, PyObject *params, PyObject *value) {
    return Py_BuildValue("(sOOO)", kind, name, params, value);
}

PyDoc_STRVAR(successors_doc,
"successors(plans, state, state_type, drawn) -> list | tuple\n\n"
"CompiledSpec._successors_of in C: for each plan (index, name, effect, guard,\n"
"instances, dynamic, arity), its instances (drawn(name, dynamic, arity, state) when\n"
"None), and per instance params the guard (when not None, by truth) then the effect,\n"
"called with (state, *params); every result that is not None becomes\n"
"(index, params, next).  The same calls in the same order as the Python loop.  On an\n"
"action's exception (an Exception other than MemoryError) or a result of another\n"
"type than state_type, the failure as a tuple (see failure()); anything else raised\n"
"(MemoryError, KeyboardInterrupt, drawn's own error) propagates.");

static PyObject *py_successors(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "successors(plans, state, state_type, drawn)");
        return NULL;
    }
    PyObject *plans = args[0], *state = args[1], *state_type = args[2], *drawn = args[3];
    if (!PyList_Check(plans)) {
        PyErr_SetString(PyExc_TypeError, "successors: plans must be a list");
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    PyObject *argv[9]; /* PY_VECTORCALL_ARGUMENTS_OFFSET slot, state, up to 7 params */
    PyObject **heap = NULL;
    Py_ssize_t heap_size = 0;
    for (Py_ssize_t pi = 0; pi < PyList_GET_SIZE(plans); pi++) {
        PyObject *plan = PyList_GET_ITEM(plans, pi);
        if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 7) {
            PyErr_SetString(PyExc_TypeError, "successors: a plan is a 7-tuple");
            goto fail;
        }
        PyObject *index = PyTuple_GET_ITEM(plan, 0), *name = PyTuple_GET_ITEM(plan, 1);
        PyObject *effect = PyTuple_GET_ITEM(plan, 2), *guard = PyTuple_GET_ITEM(plan, 3);
        PyObject *instances = PyTuple_GET_ITEM(plan, 4);
        PyObject *owned = NULL;
        if (instances == Py_None) {
            PyObject *dargs[4] = {name, PyTuple_GET_ITEM(plan, 5), PyTuple_GET_ITEM(plan, 6),
                                  state};
            owned = PyObject_Vectorcall(drawn, dargs, 4, NULL);
            if (owned == NULL) goto fail;
            instances = owned;
        }
        PyObject *seq = PySequence_Fast(instances, "an action's instances");
        Py_XDECREF(owned);
        if (seq == NULL) goto fail;
        Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t k = 0; k < count; k++) {
            PyObject *params = PySequence_Fast_GET_ITEM(seq, k);
            if (!PyTuple_Check(params)) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_TypeError, "successors: an instance is a tuple");
                goto fail;
            }
            Py_ssize_t np = PyTuple_GET_SIZE(params);
            PyObject **av = argv;
            if (np + 2 > (Py_ssize_t)(sizeof(argv) / sizeof(argv[0]))) {
                if (np + 2 > heap_size) {
                    PyObject **grown = PyMem_Realloc(heap, (size_t)(np + 2) * sizeof(PyObject *));
                    if (grown == NULL) { Py_DECREF(seq); PyErr_NoMemory(); goto fail; }
                    heap = grown;
                    heap_size = np + 2;
                }
                av = heap;
            }
            av[1] = state;
            for (Py_ssize_t j = 0; j < np; j++) av[j + 2] = PyTuple_GET_ITEM(params, j);
            size_t nf = (size_t)(np + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET;
            PyObject *nxt = NULL;
            if (guard != Py_None) {
                PyObject *ok = PyObject_Vectorcall(guard, av + 1, nf, NULL);
                if (ok == NULL) goto action_failed;
                int truth = PyObject_IsTrue(ok);
                Py_DECREF(ok);
                if (truth < 0) goto action_failed;
                if (!truth) continue;
            }
            nxt = PyObject_Vectorcall(effect, av + 1, nf, NULL);
            if (nxt == NULL) goto action_failed;
            if (nxt == Py_None) { Py_DECREF(nxt); continue; }
            if ((PyObject *)Py_TYPE(nxt) != state_type) {
                PyObject *f = failure("wrong", name, params, nxt);
                Py_DECREF(nxt);
                Py_DECREF(seq);
                Py_DECREF(out);
                PyMem_Free(heap);
                return f;
            }
            PyObject *succ = PyTuple_Pack(3, index, params, nxt);
            Py_DECREF(nxt);
            if (succ == NULL || PyList_Append(out, succ) < 0) {
                Py_XDECREF(succ);
                Py_DECREF(seq);
                goto fail;
            }
            Py_DECREF(succ);
            continue;
        action_failed:
            /* As the Python loop's `except Exception` (MemoryError re-raised): */
            if (!PyErr_ExceptionMatches(PyExc_Exception) ||
                PyErr_ExceptionMatches(PyExc_MemoryError)) {
                Py_DECREF(seq);
                goto fail;
            }
            {
                PyObject *et, *ev, *tb;
                PyErr_Fetch(&et, &ev, &tb);
                PyErr_NormalizeException(&et, &ev, &tb);
                if (tb != NULL) PyException_SetTraceback(ev, tb);
                PyObject *f = failure("error", name, params, ev);
                Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
                Py_DECREF(seq);
                Py_DECREF(out);
                PyMem_Free(heap);
                return f;
            }
        }
        Py_DECREF(seq);
    }
    PyMem_Free(heap);
    return out;
fail:
    PyMem_Free(heap);
    Py_DECREF(out);
    return NULL;
}

/* ---- type-strict equality ---------------------------------------------------- */

static int strict_eq(PyObject *a, PyObject *b);

/* Two sequences of n items each, item by item. */
static int items_eq(PyObject *const *xs, PyObject *const *ys, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        int r = strict_eq(xs[i], ys[i]);
        if (r != 1) return r;
    }
    return 1;
}

static int iter_eq(PyObject *a, PyObject *b) {
    PyObject *ia = PyObject_GetIter(a);
    if (ia == NULL) return -1;
    PyObject *ib = PyObject_GetIter(b);
    if (ib == NULL) { Py_DECREF(ia); return -1; }
    int r = 1;
    for (;;) {
        PyObject *x = PyIter_Next(ia);
        PyObject *y = PyIter_Next(ib);
        if (x == NULL || y == NULL) {
            if (PyErr_Occurred()) r = -1;
            else if (x != y) r = 0; /* one ran out first */
            Py_XDECREF(x); Py_XDECREF(y);
            break;
        }
        r = strict_eq(x, y);
        Py_DECREF(x); Py_DECREF(y);
        if (r != 1) break;
    }
    Py_DECREF(ia); Py_DECREF(ib);
    return r;
}

/* The partner of x among `members` (a list): found through `index` ({(type, m): m},
 * or NULL when members could not all be hashed) and accepted only when strictly
 * equal; by a scan where hashing or == refuses.  Returns 1 found, 0 not, -1 error. */
static int has_partner(PyObject *x, PyObject *members, PyObject *index) {
    if (index != NULL) {
        PyObject *key = PyTuple_Pack(2, (PyObject *)Py_TYPE(x), x);
        if (key == NULL) return -1;
        PyObject *y = PyDict_GetItemWithError(index, key);
        Py_DECREF(key);
        if (y != NULL) {
            Py_INCREF(y);
            int r = strict_eq(x, y);
            Py_DECREF(y);
            return r;
        }
        if (!PyErr_Occurred()) return 0;
        if (!PyErr_ExceptionMatches(PyExc_TypeError) ||
            PyErr_ExceptionMatches(StateValueError))
            return -1;
        PyErr_Clear();
    }
    Py_ssize_t n = PyList_GET_SIZE(members);
    for (Py_ssize_t i = 0; i < n; i++) {
        int r = strict_eq(x, PyList_GET_ITEM(members, i));
        if (r != 0) return r;
    }
    return 0;
}

/* {(type(m), m): m} for a list of members, or NULL with no error set when some
 * member cannot be hashed or compared (pbag): the caller scans instead. */
static PyObject *partner_index(PyObject *members) {
    PyObject *index = PyDict_New();
    if (index == NULL) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(members);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *m = PyList_GET_ITEM(members, i);
        PyObject *key = PyTuple_Pack(2, (PyObject *)Py_TYPE(m), m);
        if (key == NULL || PyDict_SetItem(index, key, m) < 0) {
            Py_XDECREF(key);
            Py_DECREF(index);
            if (PyErr_ExceptionMatches(PyExc_TypeError) &&
                !PyErr_ExceptionMatches(StateValueError))
                PyErr_Clear();
            return NULL;
        }
        Py_DECREF(key);
    }
    return index;
}

/* Every member of list xs has a strictly equal partner in list ys. */
static int pairs_up(PyObject *xs, PyObject *ys) {
    PyObject *index = partner_index(ys);
    if (index == NULL && PyErr_Occurred()) return -1;
    Py_ssize_t n = PyList_GET_SIZE(xs);
    int r = 1;
    for (Py_ssize_t i = 0; i < n && r == 1; i++)
        r = has_partner(PyList_GET_ITEM(xs, i), ys, index);
    Py_XDECREF(index);
    return r;
}

static int sets_eq(PyObject *a, PyObject *b) {
    PyObject *xs = PySequence_List(a);
    if (xs == NULL) return -1;
    PyObject *ys = PySequence_List(b);
    if (ys == NULL) { Py_DECREF(xs); return -1; }
    int r;
    Py_ssize_t n = PyList_GET_SIZE(xs);
    if (n != PyList_GET_SIZE(ys)) {
        r = 0;
    } else {
        Py_ssize_t i = 0;
        while (i < n && PyList_GET_ITEM(xs, i) == PyList_GET_ITEM(ys, i)) i++;
        r = (i == n) ? 1 : pairs_up(xs, ys);
    }
    Py_DECREF(xs); Py_DECREF(ys);
    return r;
}

static PyObject *call_list(PyObject *o, PyObject *method) {
    PyObject *view = PyObject_CallMethodNoArgs(o, method);
    if (view == NULL) return NULL;
    PyObject *l = PySequence_List(view);
    Py_DECREF(view);
    return l;
}

static int maps_eq(PyObject *a, PyObject *b) {
    Py_ssize_t na = PyObject_Size(a), nb = PyObject_Size(b);
    if (na < 0 || nb < 0) return -1;
    if (na != nb) return 0;
    PyObject *ka = call_list(a, s_keys);
    if (ka == NULL) return -1;
    PyObject *kb = call_list(b, s_keys);
    if (kb == NULL) { Py_DECREF(ka); return -1; }
    int r;
    Py_ssize_t n = PyList_GET_SIZE(ka);
    Py_ssize_t i = 0;
    if (n == PyList_GET_SIZE(kb))
        while (i < n && PyList_GET_ITEM(ka, i) == PyList_GET_ITEM(kb, i)) i++;
    if (i == n && n == PyList_GET_SIZE(kb)) {
        /* The very same keys in the same order: only the values are left. */
        PyObject *va = call_list(a, s_values), *vb = NULL;
        if (va != NULL) vb = call_list(b, s_values);
        if (va == NULL || vb == NULL) r = -1;
        else if (PyList_GET_SIZE(va) != PyList_GET_SIZE(vb)) r = 0;
        else r = items_eq(&PyList_GET_ITEM(va, 0), &PyList_GET_ITEM(vb, 0), PyList_GET_SIZE(va));
        Py_XDECREF(va); Py_XDECREF(vb);
        Py_DECREF(ka); Py_DECREF(kb);
        return r;
    }
    /* Keys paired by (type, value), then values compared strictly. */
    PyObject *index = partner_index(kb);
    if (index == NULL && PyErr_Occurred()) { Py_DECREF(ka); Py_DECREF(kb); return -1; }
    r = 1;
    for (i = 0; i < n && r == 1; i++) {
        PyObject *k = PyList_GET_ITEM(ka, i), *partner = NULL;
        int scan = index == NULL; /* (also when the lookup's == refused: as the reference) */
        if (index != NULL) {
            PyObject *key = PyTuple_Pack(2, (PyObject *)Py_TYPE(k), k);
            if (key == NULL) { r = -1; break; }
            partner = PyDict_GetItemWithError(index, key);
            Py_DECREF(key);
            if (partner == NULL && PyErr_Occurred()) {
                if (PyErr_ExceptionMatches(PyExc_TypeError) &&
                    !PyErr_ExceptionMatches(StateValueError)) {
                    PyErr_Clear();
                    scan = 1;
                } else { r = -1; break; }
            }
            if (partner != NULL) {
                int same = strict_eq(k, partner);
                if (same < 0) { r = -1; break; }
                if (!same) partner = NULL;
            }
        }
        if (partner == NULL && scan) {
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(kb); j++) {
                int same = strict_eq(k, PyList_GET_ITEM(kb, j));
                if (same < 0) { r = -1; break; }
                if (same) { partner = PyList_GET_ITEM(kb, j); break; }
            }
            if (r < 0) break;
        }
        if (partner == NULL) { r = 0; break; }
        PyObject *x = PyObject_GetItem(a, k);
        PyObject *y = x ? PyObject_GetItem(b, partner) : NULL;
        if (x == NULL || y == NULL) { Py_XDECREF(x); r = -1; break; }
        r = strict_eq(x, y);
        Py_DECREF(x); Py_DECREF(y);
    }
    Py_XDECREF(index);
    Py_DECREF(ka); Py_DECREF(kb);
    return r;
}

static int same_kind_eq(PyObject *a, PyObject *b, const TypeInfo *ti) {
    switch (ti->kind) {
    case K_INT:
    case K_STR:
        return PyObject_RichCompareBool(a, b, Py_EQ);
    case K_BOOL:
    case K_NONE:
    case K_MODEL:
    case K_ENUM:
        return 0; /* singletons, interned atoms, enum members: another object */
    case K_TUPLE:
    case K_NAMEDTUPLE: {
        Py_ssize_t n = PyTuple_GET_SIZE(a);
        if (n != PyTuple_GET_SIZE(b)) return 0;
        return items_eq(&PyTuple_GET_ITEM(a, 0), &PyTuple_GET_ITEM(b, 0), n);
    }
    case K_PVECTOR: {
        Py_ssize_t na = PyObject_Size(a), nb = PyObject_Size(b);
        if (na < 0 || nb < 0) return -1;
        return na == nb ? iter_eq(a, b) : 0;
    }
    case K_DATACLASS: {
        Py_ssize_t n = PyTuple_GET_SIZE(ti->fields);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *name = PyTuple_GET_ITEM(ti->fields, i);
            PyObject *x = PyObject_GetAttr(a, name);
            if (x == NULL) return -1;
            PyObject *y = PyObject_GetAttr(b, name);
            if (y == NULL) { Py_DECREF(x); return -1; }
            int r = strict_eq(x, y);
            Py_DECREF(x); Py_DECREF(y);
            if (r != 1) return r;
        }
        return 1;
    }
    case K_FROZENSET:
    case K_PSET:
        return sets_eq(a, b);
    case K_MAP:
    case K_PMAP:
        return maps_eq(a, b);
    case K_PBAG: {
        int r = PyObject_RichCompareBool(a, b, Py_EQ);
        if (r != 1) return r;
        PyObject *fa = PyFrozenSet_New(a);
        if (fa == NULL) return -1;
        PyObject *fb = PyFrozenSet_New(b);
        if (fb == NULL) { Py_DECREF(fa); return -1; }
        PyObject *xs = PySequence_List(fa), *ys = xs ? PySequence_List(fb) : NULL;
        Py_DECREF(fa); Py_DECREF(fb);
        if (xs == NULL || ys == NULL) { Py_XDECREF(xs); return -1; }
        r = PyList_GET_SIZE(xs) == PyList_GET_SIZE(ys) ? pairs_up(xs, ys) : 0;
        Py_DECREF(xs); Py_DECREF(ys);
        return r;
    }
    default:
        PyErr_Format(PyExc_SystemError, "strict_equal: unexpected kind %d", ti->kind);
        return -1;
    }
}

static int strict_eq(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    PyTypeObject *t = Py_TYPE(a);
    if (t != Py_TYPE(b)) return 0;
    if (t == &PyLong_Type || t == &PyUnicode_Type) return PyObject_RichCompareBool(a, b, Py_EQ);
    if (t == T_model || t == &PyBool_Type) return 0;
    TypeInfo ti;
    if (type_info(t, &ti)) return -1;
    if (Py_EnterRecursiveCall(" while comparing state values")) return -1;
    int r = same_kind_eq(a, b, &ti);
    Py_LeaveRecursiveCall();
    if (r < 0 && PyErr_ExceptionMatches(PyExc_TypeError) &&
        !PyErr_ExceptionMatches(StateValueError)) {
        /* A comparison inside refused (a pbag beside another kind): not the same. */
        PyErr_Clear();
        return 0;
    }
    return r;
}

PyDoc_STRVAR(strict_equal_doc,
"strict_equal(a, b) -> bool\n\n"
"Whether a and b are the same state value (checker.values.strict.strict_equal).");

static PyObject *py_strict_equal(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "strict_equal(a, b)"); return NULL; }
    if (!ready()) return NULL;
    int r = strict_eq(args[0], args[1]);
    if (r < 0) return NULL;
    return PyBool_FromLong(r);
}

/* ---- setup ------------------------------------------------------------------- */

PyDoc_STRVAR(setup_doc,
"setup(model_value, map, pmap, pset, pvector, pbag, state_value_error, type_info,\n"
"      big_int_hash, seeds) -> None\n\n"
"Called once by checker.values.native: the value model's types, its error, the\n"
"classifier of other types (type -> (kind, seed, fields or None)), the hash of ints\n"
"beyond 64 bits, and the kinds' seeds (a dict: name -> int) from hash64.");

static PyObject *py_setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *mv, *map, *pmap, *pset, *pvec, *pbag, *err, *info, *bigint, *seeds;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OOOO!:setup", &PyType_Type, &mv, &PyType_Type,
                          &map, &PyType_Type, &pmap, &PyType_Type, &pset, &PyType_Type, &pvec,
                          &PyType_Type, &pbag, &err, &info, &bigint, &PyDict_Type, &seeds))
        return NULL;
    PyObject *descr = PyObject_GetAttrString(mv, "fp");
    if (descr == NULL) return NULL;
    if (Py_TYPE(descr) != &PyMemberDescr_Type) {
        Py_DECREF(descr);
        PyErr_SetString(PyExc_TypeError, "ModelValue.fp must be a slot");
        return NULL;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != T_OBJECT_EX) {
        Py_DECREF(descr);
        PyErr_SetString(PyExc_TypeError, "ModelValue.fp must be an object slot");
        return NULL;
    }
    model_fp_offset = m->offset;
    Py_DECREF(descr);
    const char *names[] = {"INT", "BOOL", "STR", "NONE", "TUPLE", "PVECTOR", "FROZENSET",
                           "PSET", "MAP", "PMAP", "BAG"};
    u64 *slots[] = {&S_INT, &S_BOOL, &S_STR, &S_NONE, &S_TUPLE, &S_PVECTOR, &S_FROZENSET,
                    &S_PSET, &S_MAP, &S_PMAP, &S_BAG};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        PyObject *x = PyDict_GetItemString(seeds, names[i]);
        if (x == NULL) { PyErr_Format(PyExc_KeyError, "seed %s", names[i]); return NULL; }
        u64 s = PyLong_AsUnsignedLongLong(x);
        if (PyErr_Occurred()) return NULL;
        *slots[i] = s;
    }
    Py_XSETREF(T_model, (PyTypeObject *)Py_NewRef(mv));
    Py_XSETREF(T_map, (PyTypeObject *)Py_NewRef(map));
    Py_XSETREF(T_pmap, (PyTypeObject *)Py_NewRef(pmap));
    Py_XSETREF(T_pset, (PyTypeObject *)Py_NewRef(pset));
    Py_XSETREF(T_pvector, (PyTypeObject *)Py_NewRef(pvec));
    Py_XSETREF(T_pbag, (PyTypeObject *)Py_NewRef(pbag));
    Py_XSETREF(StateValueError, Py_NewRef(err));
    Py_XSETREF(type_info_cb, Py_NewRef(info));
    Py_XSETREF(big_int_cb, Py_NewRef(bigint));
    Py_XSETREF(info_cache, PyDict_New());
    if (info_cache == NULL) return NULL;
    Py_RETURN_NONE;
}

/* A self-check of the primitives against numbers computed by hash64 (setup calls
 * it): the seeds passed and the ones this file computes must be the same. */
PyDoc_STRVAR(seed_doc, "seed(tag) -> int: hash64.seed, in C (for the self-check).");

static PyObject *py_seed(PyObject *self, PyObject *arg) {
    (void)self;
    u64 t = PyLong_AsUnsignedLongLongMask(arg);
    if (t == (u64)-1 && PyErr_Occurred()) return NULL;
    return PyLong_FromUnsignedLongLong(seed(t));
}

/* ---- the visited set's batch test (store.fingerprints.FingerprintSet) ---------- */

/* A read-only view of a C-contiguous array of 8-byte items (a numpy uint64 array). */
static int u64_view(PyObject *obj, Py_buffer *view, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->itemsize != 8 || view->len % 8) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "add_batch: %s must be an array of 8-byte items", what);
        return -1;
    }
    return 0;
}

/* Whether the sorted a[0:len] holds x, where every item lies in [first, next]
   (len > 0).  Fingerprints are uniform, so x's place is guessed from where it lies in
   that range, and the scan from the guess is a few items, mostly in the guessed
   cache line: one wait for memory per lookup, where a binary search of a 512-byte
   block waits at each of its four or five dependent steps (on Go-Back-N, 115,000
   states, the lookups were nearly half the C successor loop's time).  The guess only
   decides where the scan starts: the answer is exact for any array. */
static inline int guessed_holds(const u64 *a, Py_ssize_t len, u64 x, u64 first, u64 next) {
    double span = (double)(next - first) + 1.0;
    Py_ssize_t g = (Py_ssize_t)((double)(x - first) / span * (double)len);
    if (g >= len) g = len - 1;
    if (g < 0) g = 0;
    if (a[g] < x) {
        do g++; while (g < len && a[g] < x);
        return g < len && a[g] == x;
    }
    while (g > 0 && a[g] > x) g--;
    return a[g] == x;
}

/* How many items of the sorted a[0:n] are not above x.  Branchless (the comparison
   selects the next half with a conditional move): the fingerprints are random, so each
   step of a branching search is a coin toss the processor mispredicts half the time. */
static inline Py_ssize_t count_not_above(const u64 *a, Py_ssize_t n, u64 x) {
    if (n <= 0) return 0;
    const u64 *base = a;
    while (n > 1) {
        Py_ssize_t half = n / 2;
        base = (base[half] <= x) ? base + half : base;
        n -= half;
    }
    return (base - a) + (*base <= x);
}

/* ---- FpSet: the recent fingerprints, an open-addressed table of 64-bit words ----- */

/* FingerprintSet's recent fingerprints (those not merged into its sorted array yet).
 * A Python set of ints cost every lookup an int object made and freed and a second
 * wait for memory (the set entry, then the int it points to), and about 85 bytes an
 * entry: on Go-Back-N three successors in four that were already known were found
 * there, not in the sorted array.  Here: the words themselves, linearly probed, at most
 * half full; 0 (the empty slot) is kept as a flag. */
typedef struct {
    PyObject_HEAD
    u64 *slots;
    Py_ssize_t mask;  /* capacity - 1, a power of two */
    Py_ssize_t used;  /* members other than 0 */
    int zero;         /* whether 0 is a member */
} FpSet;

static PyTypeObject FpSetType;

#define FPSET_MIN 1024

/* The home slot: mixed, since not every caller's numbers are uniform (tests use small
   ones). */
static inline Py_ssize_t fpset_home(const FpSet *s, u64 x) {
    return (Py_ssize_t)(fin(x) & (u64)s->mask);
}

static inline int fpset_has(const FpSet *s, u64 x) {
    if (x == 0) return s->zero;
    Py_ssize_t i = fpset_home(s, x);
    for (;;) {
        u64 y = s->slots[i];
        if (y == x) return 1;
        if (y == 0) return 0;
        i = (i + 1) & s->mask;
    }
}

static int fpset_grow(FpSet *s) {
    Py_ssize_t cap = (s->mask + 1) * 2;
    if (cap > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(u64)) { PyErr_NoMemory(); return -1; }
    u64 *fresh = PyMem_Calloc((size_t)cap, sizeof(u64));
    if (fresh == NULL) { PyErr_NoMemory(); return -1; }
    u64 *old = s->slots;
    Py_ssize_t oldcap = s->mask + 1;
    s->slots = fresh;
    s->mask = cap - 1;
    for (Py_ssize_t j = 0; j < oldcap; j++) {
        u64 y = old[j];
        if (y == 0) continue;
        Py_ssize_t i = fpset_home(s, y);
        while (fresh[i] != 0) i = (i + 1) & s->mask;
        fresh[i] = y;
    }
    PyMem_Free(old);
    return 0;
}

/* Adds x: 1 it was new, 0 it was held, -1 no memory. */
static int fpset_add(FpSet *s, u64 x) {
    if (x == 0) {
        if (s->zero) return 0;
        s->zero = 1;
        return 1;
    }
    Py_ssize_t i = fpset_home(s, x);
    for (;;) {
        u64 y = s->slots[i];
        if (y == x) return 0;
        if (y == 0) break;
        i = (i + 1) & s->mask;
    }
    if ((s->used + 1) * 2 > s->mask + 1) {
        if (fpset_grow(s)) return -1;
        i = fpset_home(s, x);
        while (s->slots[i] != 0) i = (i + 1) & s->mask;
    }
    s->slots[i] = x;
    s->used++;
    return 1;
}

static PyObject *fpset_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "FpSet() takes no arguments");
        return NULL;
    }
    FpSet *s = (FpSet *)type->tp_alloc(type, 0);
    if (s == NULL) return NULL;
    s->slots = PyMem_Calloc(FPSET_MIN, sizeof(u64));
    if (s->slots == NULL) {
        Py_DECREF(s);
        return PyErr_NoMemory();
    }
    s->mask = FPSET_MIN - 1;
    s->used = 0;
    s->zero = 0;
    return (PyObject *)s;
}

static void fpset_dealloc(FpSet *s) {
    PyMem_Free(s->slots);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static Py_ssize_t fpset_len(FpSet *s) { return s->used + s->zero; }

static inline int fingerprint_arg(PyObject *obj, u64 *out);

static int fpset_contains(FpSet *s, PyObject *obj) {
    u64 x;
    if (fingerprint_arg(obj, &x)) {
        /* (an int outside [0, 2^64), or no int: not a member, as in a set of ints) */
        if (!PyErr_ExceptionMatches(PyExc_OverflowError) &&
            !PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    return fpset_has(s, x);
}

static PyObject *fpset_add_method(FpSet *s, PyObject *obj) {
    u64 x;
    if (fingerprint_arg(obj, &x)) return NULL;
    int r = fpset_add(s, x);
    if (r < 0) return NULL;
    return PyBool_FromLong(r);
}

static PyObject *fpset_members(FpSet *s, PyObject *unused) {
    (void)unused;
    Py_ssize_t n = fpset_len(s);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(u64));
    if (out == NULL) return NULL;
    u64 *dst = (u64 *)PyBytes_AS_STRING(out);
    Py_ssize_t k = 0;
    if (s->zero) dst[k++] = 0;
    for (Py_ssize_t j = 0; j <= s->mask; j++)
        if (s->slots[j] != 0) dst[k++] = s->slots[j];
    return out;
}

static PyMethodDef fpset_methods[] = {
    {"add", (PyCFunction)fpset_add_method, METH_O,
     "add(fp: int) -> bool: add a fingerprint; whether it was new."},
    {"members", (PyCFunction)fpset_members, METH_NOARGS,
     "members() -> bytes: every member as a native-endian uint64, in no order."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods fpset_as_sequence = {
    .sq_length = (lenfunc)fpset_len,
    .sq_contains = (objobjproc)fpset_contains,
};

static PyTypeObject FpSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker.values._native.FpSet",
    .tp_basicsize = sizeof(FpSet),
    .tp_dealloc = (destructor)fpset_dealloc,
    .tp_as_sequence = &fpset_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "FpSet(): a set of 64-bit fingerprints (ints in [0, 2^64)), the words "
              "themselves in an open-addressed table (FingerprintSet's recent ones).",
    .tp_methods = fpset_methods,
    .tp_new = fpset_new,
};

/* The visited set as FingerprintSet holds it: a sorted array, the first entry of each
   full block of it, and the table of the recent fingerprints. */
typedef struct {
    Py_buffer fv, sv;
    const u64 *frozen, *summary;
    Py_ssize_t n, nb, block;
    FpSet *recent;
} Visited;

static int visited_open(Visited *v, PyObject *frozen, PyObject *summary, PyObject *block,
                        PyObject *recent) {
    if (!Py_IS_TYPE(recent, &FpSetType)) {
        PyErr_SetString(PyExc_TypeError, "the recent fingerprints must be an FpSet");
        return -1;
    }
    v->block = PyLong_AsSsize_t(block);
    if (v->block == -1 && PyErr_Occurred()) return -1;
    if (v->block <= 0) {
        PyErr_SetString(PyExc_ValueError, "the block size must be positive");
        return -1;
    }
    if (u64_view(frozen, &v->fv, "frozen")) return -1;
    if (u64_view(summary, &v->sv, "summary")) { PyBuffer_Release(&v->fv); return -1; }
    v->frozen = (const u64 *)v->fv.buf;
    v->summary = (const u64 *)v->sv.buf;
    v->n = v->fv.len / 8;
    v->nb = v->sv.len / 8;
    v->recent = (FpSet *)recent;
    return 0;
}

static void visited_close(Visited *v) {
    PyBuffer_Release(&v->fv);
    PyBuffer_Release(&v->sv);
}

/* The visited set's view held open (FingerprintSet.view): the arrays' buffers taken
 * once, when the sorted array changes, not at every expanded state (numpy's buffer
 * export was a tenth of child_candidates' time on Go-Back-N). */
typedef struct {
    PyObject_HEAD
    Visited v;  /* (its Py_buffers hold the arrays, and it holds recent) */
} VisitedView;

static void visitedview_dealloc(VisitedView *self) {
    visited_close(&self->v);
    Py_XDECREF((PyObject *)self->v.recent);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *visitedview_recent(VisitedView *self, void *closure) {
    (void)closure;
    return Py_NewRef((PyObject *)self->v.recent);
}

static PyGetSetDef visitedview_getset[] = {
    {"recent", (getter)visitedview_recent, NULL, "the recent fingerprints (an FpSet)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject VisitedViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker.values._native.VisitedView",
    .tp_basicsize = sizeof(VisitedView),
    .tp_dealloc = (destructor)visitedview_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The visited set (sorted array, block summary, block size, recent table), "
              "its buffers held open: see visited_view.",
    .tp_getset = visitedview_getset,
};

PyDoc_STRVAR(visited_view_doc,
"visited_view(frozen, summary, block: int, recent: FpSet) -> VisitedView\n\n"
"The visited set as child_candidates and the visited_add_* tests read it: frozen, a\n"
"sorted uint64 array; summary, the first fingerprint of each full block of `block`\n"
"entries of frozen (a search touches the small summary and one block, not the whole\n"
"array); recent, the fingerprints not merged yet.  The arrays' buffers are taken\n"
"once: valid while the arrays are (they are only ever replaced, never changed in\n"
"place) and recent is the store's own table.");

static PyObject *py_visited_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "visited_view takes 4 arguments");
        return NULL;
    }
    VisitedView *out = PyObject_New(VisitedView, &VisitedViewType);
    if (out == NULL) return NULL;
    if (visited_open(&out->v, args[0], args[1], args[2], args[3])) {
        /* (nothing is held: visited_open releases what it took before failing) */
        Py_TYPE(out)->tp_free((PyObject *)out);
        return NULL;
    }
    Py_INCREF((PyObject *)out->v.recent);
    return (PyObject *)out;
}

/* Marks the fingerprint obj visited: 1 it was new (now in recent), 0 it was held,
   -1 an error (not an int in [0, 2^64)). */
/* A fingerprint from an int, refused (OverflowError) outside [0, 2^64) as
 * PyLong_AsUnsignedLongLong refuses it; an int in range, every candidate's, is read
 * by its digits, where that function (before 3.12's compact ints) builds a byte
 * array for any above 2^30.  _PyLong_NumBits is private: from 3.13 on, the checked
 * function alone. */
static inline int fingerprint_arg(PyObject *obj, u64 *out) {
#if PY_VERSION_HEX < 0x030D0000
    if (PyLong_CheckExact(obj) && _PyLong_Sign(obj) >= 0 && _PyLong_NumBits(obj) <= 64) {
        *out = PyLong_AsUnsignedLongLongMask(obj);
        return 0;
    }
#endif
    *out = PyLong_AsUnsignedLongLong(obj);
    return (*out == (u64)-1 && PyErr_Occurred()) ? -1 : 0;
}

/* Whether the sorted array holds x: the summary's search picks the one block that
   can hold it. */
static int frozen_holds(const Visited *v, u64 x) {
    if (v->n <= 0) return 0;
    Py_ssize_t lo = 0, hi = v->n;
    u64 first = 0, next = ~(u64)0; /* the bounds of the range searched */
    if (v->nb > 0) {
        /* The last block whose first fingerprint is not above x (the last
           block's range runs on through the partial tail). */
        Py_ssize_t a = count_not_above(v->summary, v->nb, x);
        if (a == 0) return 0; /* below the first fingerprint */
        lo = (a - 1) * v->block;
        hi = (a == v->nb) ? v->n : lo + v->block;
        first = v->summary[a - 1];
        if (a < v->nb) next = v->summary[a];
    }
    return guessed_holds(v->frozen + lo, hi - lo, x, first, next);
}

static int visited_add(const Visited *v, PyObject *obj) {
    u64 x;
    if (fingerprint_arg(obj, &x)) return -1;
    if (frozen_holds(v, x)) return 0;
    return fpset_add(v->recent, x);
}

/* The VisitedView argument, or NULL with a TypeError naming the function. */
static const Visited *visited_arg(PyObject *obj, const char *fn) {
    if (!Py_IS_TYPE(obj, &VisitedViewType)) {
        PyErr_Format(PyExc_TypeError, "%s: the visited set is a VisitedView", fn);
        return NULL;
    }
    return &((VisitedView *)obj)->v;
}

PyDoc_STRVAR(visited_add_batch_doc,
"visited_add_batch(fps, visited) -> list[bool]\n\n"
"FingerprintSet.add_batch after its merge: for each fingerprint in order, True (and\n"
"added to the view's recent table) when neither the sorted array nor the table holds\n"
"it.  visited: a VisitedView (see visited_view).");

static PyObject *py_visited_add_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "visited_add_batch(fps: list, visited: VisitedView)");
        return NULL;
    }
    const Visited *v = visited_arg(args[1], "visited_add_batch");
    if (v == NULL) return NULL;
    PyObject *fps = args[0];
    Py_ssize_t m = PyList_GET_SIZE(fps);
    PyObject *out = PyList_New(m);
    for (Py_ssize_t i = 0; out != NULL && i < m; i++) {
        int r = visited_add(v, PyList_GET_ITEM(fps, i));
        if (r < 0) Py_CLEAR(out);
        else PyList_SET_ITEM(out, i, Py_NewRef(r ? Py_True : Py_False));
    }
    return out;
}

PyDoc_STRVAR(visited_add_groups_doc,
"visited_add_groups(groups, pos, visited) -> list[list]\n\n"
"FingerprintSet.add_groups after its merge: the fingerprint at index pos of each\n"
"item (a tuple) of each group, in order, marked visited as visited_add_batch does\n"
"(an item whose fingerprint is None is passed over); per group, the list of its\n"
"items whose fingerprint was new.");

static PyObject *py_visited_add_groups(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError,
                        "visited_add_groups(groups: list, pos, visited: VisitedView)");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    const Visited *v = visited_arg(args[2], "visited_add_groups");
    if (v == NULL) return NULL;
    PyObject *groups = args[0];
    Py_ssize_t m = PyList_GET_SIZE(groups);
    PyObject *out = PyList_New(m);
    for (Py_ssize_t g = 0; out != NULL && g < m; g++) {
        PyObject *group = PyList_GET_ITEM(groups, g), *fresh = PyList_New(0);
        if (fresh == NULL) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, g, fresh);
        if (!PyList_Check(group)) {
            PyErr_SetString(PyExc_TypeError, "visited_add_groups: a group is not a list");
            Py_CLEAR(out);
            break;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(group); i++) {
            PyObject *item = PyList_GET_ITEM(group, i);
            if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) <= pos || pos < 0) {
                PyErr_SetString(PyExc_TypeError,
                                "visited_add_groups: an item is not a tuple holding pos");
                Py_CLEAR(out);
                break;
            }
            PyObject *fp_obj = PyTuple_GET_ITEM(item, pos);
            if (fp_obj == Py_None) continue;
            int r = visited_add(v, fp_obj);
            if (r < 0 || (r == 1 && PyList_Append(fresh, item) < 0)) { Py_CLEAR(out); break; }
        }
    }
    return out;
}

PyDoc_STRVAR(child_candidates_doc,
"child_candidates(succ, pvals, pterms, update, within=None, getter=None, visited=None)\n"
"    -> (actions, candidates, outside)\n\n"
"Expansion.expand's loop without action properties: for each successor (action,\n"
"params, state) of succ at index k, the candidate (k, action, params, (state, vals,\n"
"terms), fingerprint), vals the state's variables (the state itself where it is\n"
"their tuple, a NamedTuple; else getter(state), which must give a tuple: a frozen\n"
"dataclass's fields), the terms and fingerprint as child_terms gives them from the\n"
"parent's values and terms; and the list of the successors' actions.  With within\n"
"(the state constraint, a predicate), a successor it does not hold for gets the candidate\n"
"(k, action, params, None, None) and its k goes to outside, in order, for the caller\n"
"to check its invariants.  With visited (a VisitedView, see visited_view), a\n"
"successor inside the constraint whose fingerprint the\n"
"visited set already holds gets no candidate (nothing is built for it; the set is\n"
"only read).  None (nothing built) when within returns a non-boolean; an exception\n"
"raised by within propagates.");

static PyObject *py_child_candidates(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs < 4 || nargs > 7 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "child_candidates(succ: list, pvals, pterms, update, "
                                         "within=None, getter=None, visited=None)");
        return NULL;
    }
    if (!ready()) return NULL;
    PyObject *succ = args[0], *update = args[3];
    PyObject *within = (nargs >= 5 && args[4] != Py_None) ? args[4] : NULL;
    /* A state that is not its own tuple of variables (a frozen dataclass): the model's
     * getter gives them, called here without a Python frame of ours around it. */
    PyObject *getter = (nargs >= 6 && args[5] != Py_None) ? args[5] : NULL;
    /* The visited set, read only: nine successors in ten are known already, and a
     * known one needs no terms tuple, handle, candidate or int (Go-Back-N spent 9% of
     * its run freeing them).  Sound whatever the caller does next: the set only grows,
     * so a successor held now is held when the store is asked about the rest. */
    const Visited *seen = NULL;
    if (nargs == 7 && args[6] != Py_None) {
        seen = visited_arg(args[6], "child_candidates");
        if (seen == NULL) return NULL;
    }
    PyObject *pvals = as_tuple(args[1]), *pterms = NULL, *actions = NULL, *cands = NULL;
    PyObject *outside = NULL, *res = NULL;
    TermsBuf tb = {.hs = NULL};
    /* The parent's side of every successor's comparison, fingerprinted once: pvals
     * holds the parent's values for the whole call. */
    ParentMemo *memo = NULL;
    if (pvals) pterms = as_tuple(args[2]);
    if (pterms == NULL || (memo = memo_new()) == NULL) goto done;
    if (termsbuf_fit(&tb, PyTuple_GET_SIZE(pterms))) goto done;
    Py_ssize_t m = PyList_GET_SIZE(succ);
    actions = PyList_New(m);
    cands = actions ? PyList_New(0) : NULL;
    outside = cands ? PyList_New(0) : NULL;
    if (outside == NULL) goto done;
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *item = PyList_GET_ITEM(succ, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3) {
            PyErr_SetString(PyExc_TypeError, "child_candidates: a successor is not a triple");
            goto done;
        }
        PyObject *ai = PyTuple_GET_ITEM(item, 0), *params = PyTuple_GET_ITEM(item, 1);
        PyObject *t = PyTuple_GET_ITEM(item, 2);
        PyList_SET_ITEM(actions, k, Py_NewRef(ai));
        if (within != NULL) {
            PyObject *in = PyObject_CallOneArg(within, t);
            if (in == NULL) goto done;
            int inside = in == Py_True, boolean = inside || in == Py_False;
            Py_DECREF(in);
            if (!inside) {
                if (!boolean) {  /* not a boolean: the caller's loop says so, naming it */
                    res = Py_NewRef(Py_None);
                    goto done;
                }
                PyObject *kobj = PyLong_FromSsize_t(k);
                PyObject *cand = kobj ? PyTuple_Pack(5, kobj, ai, params, Py_None, Py_None) : NULL;
                int bad = cand == NULL || PyList_Append(outside, kobj) < 0
                          || PyList_Append(cands, cand) < 0;
                Py_XDECREF(kobj);
                Py_XDECREF(cand);
                if (bad) goto done;
                continue;
            }
        }
        PyObject *tvals = getter ? PyObject_CallOneArg(getter, t) : as_tuple(t);
        if (tvals == NULL) goto done;
        if (!PyTuple_Check(tvals)) {
            Py_DECREF(tvals);
            PyErr_SetString(PyExc_TypeError, "child_candidates: getter gave no tuple");
            goto done;
        }
        u64 total;
        if (child_terms_raw(memo, tvals, pvals, pterms, update, tb.hs, tb.same, &total)) {
            Py_DECREF(tvals);
            goto done;
        }
        if (seen != NULL) {
            if (frozen_holds(seen, total) || fpset_has(seen->recent, total)) {
                Py_DECREF(tvals);
                continue;  /* known: no candidate */
            }
        }
        PyObject *terms = terms_tuple(PyTuple_GET_SIZE(tvals), tb.hs, tb.same, pterms);
        if (terms == NULL) { Py_DECREF(tvals); goto done; }
        /* The handle holds the state and its values, as the Python loop's does (a
         * NamedTuple as its own values). */
        PyObject *handle = PyTuple_Pack(3, t, getter ? tvals : t, terms);
        Py_DECREF(tvals);
        Py_DECREF(terms);
        if (handle == NULL) goto done;
        PyObject *kobj = PyLong_FromSsize_t(k);
        PyObject *fpobj = PyLong_FromUnsignedLongLong(total);
        PyObject *cand = (kobj && fpobj) ? PyTuple_Pack(5, kobj, ai, params, handle, fpobj) : NULL;
        Py_XDECREF(kobj); Py_XDECREF(fpobj); Py_DECREF(handle);
        if (cand == NULL) goto done;
        int bad = PyList_Append(cands, cand) < 0;
        Py_DECREF(cand);
        if (bad) goto done;
    }
    res = PyTuple_Pack(3, actions, cands, outside);
done:
    memo_del(memo);
    termsbuf_free(&tb);
    Py_XDECREF(pvals); Py_XDECREF(pterms); Py_XDECREF(actions); Py_XDECREF(cands);
    Py_XDECREF(outside);
    return res;
}

/* ---- sort keys (fingerprint.sort_key: the text of the canonical encoding) ------- */

/* Set by key_setup() from checker/values/fingerprint.py: the Python sort_key (for the
   kinds written out there only: pvectors, psets, pmaps, bags, dataclasses, enums),
   the record prefix "(b'#r', 'module.Class'" of a NamedTuple class, and the texts
   of the frozenset and Map tags.  Caches of pure functions of types and of
   (interned, immortal) model values. */
static PyObject *key_fallback = NULL, *key_prefix_of = NULL;
static PyObject *key_set_tag = NULL, *key_map_tag = NULL;
static PyObject *key_prefixes = NULL; /* dict: NamedTuple class -> its prefix */
static PyObject *key_models = NULL;   /* dict: model value -> repr of its token */
static PyObject *s_token = NULL, *s_comma = NULL;

static PyObject *key_of(PyObject *v);

/* "(a, b, ...)" from a list of texts: Python's repr of a tuple of that many items
   ("()" for none, "(a,)" for one). */
static PyObject *tuple_text(PyObject *parts) {
    Py_ssize_t n = PyList_GET_SIZE(parts);
    if (n == 0) return PyUnicode_FromString("()");
    if (n == 1) return PyUnicode_FromFormat("(%U,)", PyList_GET_ITEM(parts, 0));
    PyObject *joined = PyUnicode_Join(s_comma, parts);
    if (joined == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("(%U)", joined);
    Py_DECREF(joined);
    return r;
}

/* The texts of a container's members, sorted: their reprs in value order when every
   member is an exact int or every one an exact str (so are their encodings), else
   their keys in text order (fingerprint._sorted).  A new list, or NULL. */
static PyObject *sorted_member_keys(PyObject *members) {
    Py_ssize_t n = PyList_GET_SIZE(members);
    PyTypeObject *t0 = n ? Py_TYPE(PyList_GET_ITEM(members, 0)) : NULL;
    int plain = t0 == &PyLong_Type || t0 == &PyUnicode_Type;
    for (Py_ssize_t i = 1; plain && i < n; i++)
        plain = Py_TYPE(PyList_GET_ITEM(members, i)) == t0;
    if (plain && PyList_Sort(members) < 0) return NULL;
    PyObject *keys = PyList_New(n);
    if (keys == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(members, i);
        PyObject *k = plain ? PyObject_Repr(x) : key_of(x);
        if (k == NULL) { Py_DECREF(keys); return NULL; }
        PyList_SET_ITEM(keys, i, k);
    }
    if (!plain && PyList_Sort(keys) < 0) { Py_DECREF(keys); return NULL; }
    return keys;
}

/* A tagged container's text, its tag then its sorted keys: the list `keys` (a new
   reference, consumed) gets the tag in front. */
static PyObject *tagged_text(PyObject *tag, PyObject *keys) {
    if (keys == NULL) return NULL;
    PyObject *r = PyList_Insert(keys, 0, tag) == 0 ? tuple_text(keys) : NULL;
    Py_DECREF(keys);
    return r;
}

static PyObject *set_key(PyObject *v) {
    PyObject *members = PySequence_List(v);
    if (members == NULL) return NULL;
    PyObject *r = tagged_text(key_set_tag, sorted_member_keys(members));
    Py_DECREF(members);
    return r;
}

/* A Map entry's text "(key, value)" into the list ctx. */
static int entry_key(PyObject *k, PyObject *x, void *ctx) {
    PyObject *kk = key_of(k);
    if (kk == NULL) return -1;
    PyObject *xk = key_of(x);
    if (xk == NULL) { Py_DECREF(kk); return -1; }
    PyObject *e = PyUnicode_FromFormat("(%U, %U)", kk, xk);
    Py_DECREF(kk); Py_DECREF(xk);
    if (e == NULL) return -1;
    int bad = PyList_Append((PyObject *)ctx, e) < 0;
    Py_DECREF(e);
    return bad ? -1 : 0;
}

static PyObject *map_key(PyObject *v) {
    /* The entries are pairs, never ints or strs: in text order. */
    PyObject *entries = PyList_New(0);
    if (entries == NULL) return NULL;
    if (map_each(v, entry_key, entries) < 0 || PyList_Sort(entries) < 0) {
        Py_DECREF(entries);
        return NULL;
    }
    return tagged_text(key_map_tag, entries);
}

/* A tuple's items' keys after `head` (a NamedTuple's prefix) or as a plain tuple. */
static PyObject *items_key(PyObject *v, PyObject *head) {
    Py_ssize_t n = PyTuple_GET_SIZE(v);
    PyObject *parts = PyList_New(0), *r = NULL;
    if (parts == NULL) return NULL;
    Py_ssize_t i = 0;
    for (; i < n; i++) {
        PyObject *k = key_of(PyTuple_GET_ITEM(v, i));
        if (k == NULL) break;
        int bad = PyList_Append(parts, k) < 0;
        Py_DECREF(k);
        if (bad) break;
    }
    if (i == n) {
        if (head == NULL) {
            r = tuple_text(parts);
        } else if (n == 0) {
            r = PyUnicode_FromFormat("%U)", head);
        } else {
            PyObject *joined = PyUnicode_Join(s_comma, parts);
            if (joined != NULL) r = PyUnicode_FromFormat("%U, %U)", head, joined);
            Py_XDECREF(joined);
        }
    }
    Py_DECREF(parts);
    return r;
}

static PyObject *record_key(PyObject *v, PyTypeObject *t) {
    PyObject *head = PyDict_GetItemWithError(key_prefixes, (PyObject *)t);
    if (head == NULL) {
        if (PyErr_Occurred()) return NULL;
        PyObject *got = PyObject_CallOneArg(key_prefix_of, (PyObject *)t);
        if (got == NULL) return NULL;
        int bad = !PyUnicode_Check(got) || PyDict_SetItem(key_prefixes, (PyObject *)t, got) < 0;
        Py_DECREF(got);
        if (bad) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_SystemError, "a record prefix must be a str");
            return NULL;
        }
        head = PyDict_GetItemWithError(key_prefixes, (PyObject *)t);
        if (head == NULL) return NULL;
    }
    return items_key(v, head);
}

static PyObject *model_key(PyObject *v) {
    PyObject *k = PyDict_GetItemWithError(key_models, v);
    if (k != NULL) return Py_NewRef(k);
    if (PyErr_Occurred()) return NULL;
    PyObject *token = PyObject_GetAttr(v, s_token);
    if (token == NULL) return NULL;
    k = PyObject_Repr(token);
    Py_DECREF(token);
    if (k == NULL || PyDict_SetItem(key_models, v, k) < 0) { Py_XDECREF(k); return NULL; }
    return k;
}

static PyObject *key_of(PyObject *v) {
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyLong_Type || t == &PyUnicode_Type || t == &PyBool_Type || v == Py_None)
        return PyObject_Repr(v); /* atoms stand for themselves */
    if (t == T_model) return model_key(v);
    if (Py_EnterRecursiveCall(" while ordering a state value")) return NULL;
    PyObject *r;
    if (t == &PyTuple_Type) {
        r = items_key(v, NULL);
    } else if (t == &PyFrozenSet_Type) {
        r = set_key(v);
    } else if (t == T_map) {
        r = map_key(v);
    } else {
        TypeInfo ti; /* refuses what the value model refuses, as encode() does */
        if (type_info(t, &ti)) r = NULL;
        else if (ti.kind == K_NAMEDTUPLE) r = record_key(v, t);
        else r = PyObject_CallOneArg(key_fallback, v);
    }
    Py_LeaveRecursiveCall();
    return r;
}

PyDoc_STRVAR(sort_key_doc,
"sort_key(value) -> str\n\n"
"repr(encode(value)) (checker.values.fingerprint.sort_key), written directly: no\n"
"encoding built, the same text.");

static PyObject *py_sort_key(PyObject *self, PyObject *v) {
    (void)self;
    if (!ready()) return NULL;
    if (key_fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "checker.values._native.key_setup() was not called");
        return NULL;
    }
    return key_of(v);
}

PyDoc_STRVAR(key_setup_doc,
"key_setup(fallback, prefix_of, set_tag, map_tag)\n\n"
"What sort_key needs of checker.values.fingerprint: the Python sort_key (for the\n"
"kinds it leaves to it), a NamedTuple class's prefix \"(b'#r', 'module.Class'\", and\n"
"repr(TAG_FROZENSET) and repr(TAG_MAP).");

static PyObject *py_key_setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *fallback, *prefix_of, *set_tag, *map_tag;
    if (!PyArg_ParseTuple(args, "OOUU", &fallback, &prefix_of, &set_tag, &map_tag)) return NULL;
    if (key_prefixes == NULL && (key_prefixes = PyDict_New()) == NULL) return NULL;
    if (key_models == NULL && (key_models = PyDict_New()) == NULL) return NULL;
    if (s_token == NULL && (s_token = PyUnicode_InternFromString("token")) == NULL) return NULL;
    if (s_comma == NULL && (s_comma = PyUnicode_InternFromString(", ")) == NULL) return NULL;
    Py_XSETREF(key_fallback, Py_NewRef(fallback));
    Py_XSETREF(key_prefix_of, Py_NewRef(prefix_of));
    Py_XSETREF(key_set_tag, Py_NewRef(set_tag));
    Py_XSETREF(key_map_tag, Py_NewRef(map_tag));
    PyDict_Clear(key_prefixes);
    Py_RETURN_NONE;
}

/* ---- the stored states and the cyclic collector (store.frontier) --------------- */

/* A growable stack of borrowed references (each held alive by the value walked). */
typedef struct {
    PyObject **items;
    Py_ssize_t n, cap;
} Stack;

static int untrack_visit(PyObject *o, void *arg) {
    Stack *st = (Stack *)arg;
    /* Types and modules live for the run and may take part in cycles: left alone. */
    if (o == NULL || !PyObject_IS_GC(o) || !PyObject_GC_IsTracked(o) || PyType_Check(o) ||
        PyModule_Check(o))
        return 0;
    if (st->n == st->cap) {
        Py_ssize_t cap = st->cap ? 2 * st->cap : 64;
        PyObject **items = PyMem_Realloc(st->items, (size_t)cap * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        st->items = items;
        st->cap = cap;
    }
    /* Untracked as it is found, so a value met twice is walked once. */
    PyObject_GC_UnTrack(o);
    st->items[st->n++] = o;
    return 0;
}

PyDoc_STRVAR(untrack_doc,
"untrack(values: list) -> None\n\n"
"Take each of values, and every object it holds that the cyclic collector tracks\n"
"(types and modules excepted), off the collector's lists.  For stored states:\n"
"immutable values are built from the values before them, so no reference cycle\n"
"runs through one, and the collector's scans of them (every young collection\n"
"re-scanned all the states stored since the last) find nothing.  Reference\n"
"counting frees them as before; an object it already does not track ends the walk\n"
"there (what it holds was untracked with it, or never tracked).");

static PyObject *py_untrack(PyObject *self, PyObject *values) {
    (void)self;
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "untrack(values: list)");
        return NULL;
    }
    Stack st = {NULL, 0, 0};
    int bad = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values) && !bad; i++) {
        bad = untrack_visit(PyList_GET_ITEM(values, i), &st);
        while (!bad && st.n > 0) {
            PyObject *o = st.items[--st.n];
            traverseproc traverse = Py_TYPE(o)->tp_traverse;
            if (traverse != NULL) bad = traverse(o, untrack_visit, &st);
        }
    }
    PyMem_Free(st.items);
    if (bad) return NULL;
    Py_RETURN_NONE;
}

/* -- Successors generated per action family --------------------------------------- */

PyDoc_STRVAR(action_counts_doc,
"action_counts(counts) -> (total, {action: n}) | None\n\n"
"Over counts, a list of (ordinal, actions) pairs (actions: the list of each\n"
"successor's action family, small non-negative ints), the number of successors and\n"
"how many each family generated (families with none left out), as the explorer's\n"
"Counter over them gives; None for anything else (the caller counts in Python).");

#define COUNT_FAMILIES 4096  /* families counted in an array; more: None */

static PyObject *py_action_counts(PyObject *self, PyObject *counts) {
    (void)self;
    if (!PyList_Check(counts)) Py_RETURN_NONE;
    Py_ssize_t *per = PyMem_Calloc(COUNT_FAMILIES, sizeof(Py_ssize_t));
    if (per == NULL) return PyErr_NoMemory();
    Py_ssize_t total = 0, top = -1;
    int other = 0; /* something this loop does not count: the caller's Counter does */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(counts) && !other; i++) {
        PyObject *pair = PyList_GET_ITEM(counts, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyList_Check(PyTuple_GET_ITEM(pair, 1))) {
            other = 1;
            break;
        }
        PyObject *actions = PyTuple_GET_ITEM(pair, 1);
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(actions); j++) {
            PyObject *a = PyList_GET_ITEM(actions, j);
            if (!PyLong_CheckExact(a)) { other = 1; break; }
            Py_ssize_t ai = PyLong_AsSsize_t(a);
            if (ai < 0 || ai >= COUNT_FAMILIES) {
                PyErr_Clear();  /* (an overflow, if that was it) */
                other = 1;
                break;
            }
            per[ai]++;
            if (ai > top) top = ai;
        }
        total += PyList_GET_SIZE(actions);
    }
    PyObject *out = NULL, *dict = NULL;
    if (other) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    dict = PyDict_New();
    if (dict == NULL) goto done;
    for (Py_ssize_t ai = 0; ai <= top; ai++) {
        if (per[ai] == 0) continue;
        PyObject *k = PyLong_FromSsize_t(ai), *v = PyLong_FromSsize_t(per[ai]);
        int bad = k == NULL || v == NULL || PyDict_SetItem(dict, k, v) < 0;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (bad) goto done;
    }
    out = Py_BuildValue("(nO)", total, dict);
done:
    Py_XDECREF(dict);
    PyMem_Free(per);
    return out;
}

/* -- A record's _replace and __new__ in C ---------------------------------------------
 *
 * collections.namedtuple writes both in Python.  ``_replace`` builds a keyword dict,
 * calls ``_make``, maps ``kwds.pop`` over the fields and calls ``tuple.__new__``; about
 * 1.5 us a call, and nearly every action ends in one (``s._replace(msgs=...)``).
 * ``__new__`` is a lambda that packs its arguments into a tuple and calls
 * ``tuple.__new__``, which copies it into the record; specs build records by the
 * million (a message looked up in a set is built first).  On PaxosCommit the two took
 * about 11% of a run.
 *
 * A RecordMethod is one of them for one class, in C: it builds the record as
 * ``tuple.__new__(cls, items)`` does (cls's tp_alloc, the items copied in, tracked by
 * the collector), from the very objects given.  Whatever it does not do exactly as
 * the original it leaves to the original, called with the same arguments:
 * - both: a call on another class than the one it was made for (a subclass, whose
 *   ``_make`` may differ);
 * - ``_replace``: positional arguments, a keyword that names no field (the original
 *   raises its ValueError), a keyword name that is not an exact str, an instance
 *   whose length is not the number of fields;
 * - ``__new__``: keywords, or not exactly one positional argument per field (the
 *   original fills in defaults and raises its TypeErrors).
 * checker/values/records.py recognises the originals and sets these for a run.
 */
typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;   /* the class it was made for */
    PyObject *fields;    /* its _fields (a tuple of str) */
    PyObject *original;  /* the function it stands for */
    int is_new;          /* __new__ (called as cls.__new__(cls, ...)) or _replace */
    vectorcallfunc vectorcall;
} RecordMethod;

/* cls(items...) as tuple.__new__(cls, items) builds it: a new reference to each of
   the n items, the object tracked by the collector (tp_alloc's GenericAlloc already
   does; a class whose tp_alloc does not gets it here, as tuple_subtype_new does). */
static PyObject *record_build(PyTypeObject *cls, PyObject *const *items, Py_ssize_t n) {
    PyObject *out = cls->tp_alloc(cls, n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(out, i, Py_NewRef(items[i]));
    if (!PyObject_GC_IsTracked(out)) PyObject_GC_Track(out);
    return out;
}

static PyObject *record_new_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames) {
    RecordMethod *r = (RecordMethod *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t n = PyTuple_GET_SIZE(r->fields);
    if (kwnames != NULL || nargs != n + 1 || args[0] != (PyObject *)r->cls)
        return PyObject_Vectorcall(r->original, args, nargsf, kwnames);
    return record_build(r->cls, args + 1, n);
}

#define MAX_FIELDS 64

static PyObject *record_replace_call(PyObject *callable, PyObject *const *args,
                                     size_t nargsf, PyObject *kwnames) {
    RecordMethod *r = (RecordMethod *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1 || Py_TYPE(args[0]) != r->cls)
        return PyObject_Vectorcall(r->original, args, nargsf, kwnames);
    PyObject *self = args[0];
    Py_ssize_t n = PyTuple_GET_SIZE(r->fields);
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (PyTuple_GET_SIZE(self) != n || n > MAX_FIELDS)
        return PyObject_Vectorcall(r->original, args, nargsf, kwnames);
    PyObject *items[MAX_FIELDS];
    for (Py_ssize_t i = 0; i < n; i++) items[i] = PyTuple_GET_ITEM(self, i);
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        if (!PyUnicode_CheckExact(name))
            return PyObject_Vectorcall(r->original, args, nargsf, kwnames);
        Py_ssize_t i = 0;
        /* Keyword names and field names are interned identifiers: compare addresses
           first, text after (a name built at run time). */
        while (i < n && PyTuple_GET_ITEM(r->fields, i) != name) i++;
        if (i == n) {
            for (i = 0; i < n; i++) {
                int eq = PyUnicode_Compare(PyTuple_GET_ITEM(r->fields, i), name);
                if (eq == -1 && PyErr_Occurred()) return NULL;
                if (eq == 0) break;
            }
            if (i == n) return PyObject_Vectorcall(r->original, args, nargsf, kwnames);
        }
        /* (keyword names are distinct, so each field is written at most once) */
        items[i] = args[1 + k];
    }
    return record_build(r->cls, items, n);
}

static PyObject *record_get(PyObject *self, PyObject *obj, PyObject *type) {
    (void)type;
    /* Bound like a function: a method of obj, itself when looked up on the class. */
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static int record_traverse(RecordMethod *r, visitproc visit, void *arg) {
    Py_VISIT(r->cls);
    Py_VISIT(r->fields);
    Py_VISIT(r->original);
    return 0;
}

static int record_clear(RecordMethod *r) {
    Py_CLEAR(r->cls);
    Py_CLEAR(r->fields);
    Py_CLEAR(r->original);
    return 0;
}

static void record_dealloc(RecordMethod *r) {
    PyObject_GC_UnTrack(r);
    record_clear(r);
    PyObject_GC_Del(r);
}

static PyObject *record_repr(RecordMethod *r) {
    return PyUnicode_FromFormat("<mcheck's %s of %s, in C>", r->is_new ? "__new__" : "_replace",
                                r->cls ? r->cls->tp_name : "?");
}

static PyObject *record_name(RecordMethod *r, void *closure) {
    (void)closure;
    return PyUnicode_FromString(r->is_new ? "__new__" : "_replace");
}

static PyObject *record_qualname(RecordMethod *r, void *closure) {
    (void)closure;
    return PyObject_GetAttrString(r->original, "__qualname__");
}

static PyObject *record_wrapped(RecordMethod *r, void *closure) {
    (void)closure;
    return Py_NewRef(r->original);
}

static PyGetSetDef record_getset[] = {
    {"__name__", (getter)record_name, NULL, NULL, NULL},
    {"__qualname__", (getter)record_qualname, NULL, NULL, NULL},
    {"__wrapped__", (getter)record_wrapped, NULL, "the function it stands for", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RecordMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker.values._native.RecordMethod",
    .tp_basicsize = sizeof(RecordMethod),
    .tp_dealloc = (destructor)record_dealloc,
    .tp_vectorcall_offset = offsetof(RecordMethod, vectorcall),
    .tp_repr = (reprfunc)record_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A namedtuple class's _replace or __new__, in C (see record_method).",
    .tp_traverse = (traverseproc)record_traverse,
    .tp_clear = (inquiry)record_clear,
    .tp_descr_get = record_get,
    .tp_getset = record_getset,
};

PyDoc_STRVAR(record_method_doc,
"record_method(cls: type, fields: tuple[str, ...], original, is_new: bool) -> RecordMethod\n\n"
"namedtuple class cls's _replace (is_new false) or __new__ (true), built in C:\n"
"it returns what original, the class's own, returns, and leaves to original what it\n"
"does not do itself (a subclass, a keyword naming no field, a default to fill in,\n"
"...).  It binds like a function (set __new__ as a staticmethod of it).");

static PyObject *py_record_method(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    (void)self;
    if (n != 4 || !PyType_Check(args[0]) ||
        !PyType_IsSubtype((PyTypeObject *)args[0], &PyTuple_Type) ||
        !PyTuple_CheckExact(args[1]) || !PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "record_method(cls: tuple subclass, fields: tuple, original: callable, "
                        "is_new: bool)");
        return NULL;
    }
    Py_ssize_t nf = PyTuple_GET_SIZE(args[1]);
    if (nf > MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "record_method: more than 64 fields");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nf; i++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(args[1], i))) {
            PyErr_SetString(PyExc_TypeError, "record_method: fields must be str");
            return NULL;
        }
    int is_new = PyObject_IsTrue(args[3]);
    if (is_new < 0) return NULL;
    RecordMethod *r = PyObject_GC_New(RecordMethod, &RecordMethodType);
    if (r == NULL) return NULL;
    r->cls = (PyTypeObject *)Py_NewRef(args[0]);
    r->fields = Py_NewRef(args[1]);
    r->original = Py_NewRef(args[2]);
    r->is_new = is_new;
    /* Each object's own vectorcall slot: the method is chosen once, not per call. */
    r->vectorcall = is_new ? record_new_call : record_replace_call;
    PyObject_GC_Track(r);
    return (PyObject *)r;
}

static PyMethodDef methods[] = {
    {"fingerprint", (PyCFunction)(void (*)(void))py_fingerprint, METH_FASTCALL, fingerprint_doc},
    {"fingerprints", (PyCFunction)(void (*)(void))py_fingerprints, METH_FASTCALL, fingerprints_doc},
    {"strict_equal", (PyCFunction)(void (*)(void))py_strict_equal, METH_FASTCALL, strict_equal_doc},
    {"mix", (PyCFunction)(void (*)(void))py_mix, METH_FASTCALL, mix_doc},
    {"entry_term", (PyCFunction)(void (*)(void))py_entry_term, METH_FASTCALL, entry_term_doc},
    {"element_term", (PyCFunction)(void (*)(void))py_element_term, METH_FASTCALL, element_term_doc},
    {"map_update", (PyCFunction)(void (*)(void))py_map_update, METH_FASTCALL, map_update_doc},
    {"set_update", (PyCFunction)(void (*)(void))py_set_update, METH_FASTCALL, set_update_doc},
    {"successors", (PyCFunction)(void (*)(void))py_successors, METH_FASTCALL, successors_doc},
    {"lanes_adjust", (PyCFunction)(void (*)(void))py_lanes_adjust, METH_FASTCALL, lanes_adjust_doc},
    {"lanes_scalar", (PyCFunction)(void (*)(void))py_lanes_scalar, METH_FASTCALL, lanes_scalar_doc},
    {"child_terms", (PyCFunction)(void (*)(void))py_child_terms, METH_FASTCALL, child_terms_doc},
    {"child_candidates", (PyCFunction)(void (*)(void))py_child_candidates, METH_FASTCALL,
     child_candidates_doc},
    {"visited_view", (PyCFunction)(void (*)(void))py_visited_view, METH_FASTCALL,
     visited_view_doc},
    {"visited_add_batch", (PyCFunction)(void (*)(void))py_visited_add_batch, METH_FASTCALL,
     visited_add_batch_doc},
    {"visited_add_groups", (PyCFunction)(void (*)(void))py_visited_add_groups, METH_FASTCALL,
     visited_add_groups_doc},
    {"record_method", (PyCFunction)(void (*)(void))py_record_method, METH_FASTCALL,
     record_method_doc},
    {"untrack", py_untrack, METH_O, untrack_doc},
    {"action_counts", py_action_counts, METH_O, action_counts_doc},
    {"tuple_view", py_tuple_view, METH_O, tuple_view_doc},
    {"sort_key", py_sort_key, METH_O, sort_key_doc},
    {"key_setup", py_key_setup, METH_VARARGS, key_setup_doc},
    {"setup", py_setup, METH_VARARGS, setup_doc},
    {"seed", py_seed, METH_O, seed_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "checker.values._native",
    "The value model's fingerprint and strict equality in C (see checker/values/native.py).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    s_buckets = PyUnicode_InternFromString("_buckets");
    s_map = PyUnicode_InternFromString("_map");
    s_counts = PyUnicode_InternFromString("_counts");
    s_items = PyUnicode_InternFromString("items");
    s_name = PyUnicode_InternFromString("name");
    s_keys = PyUnicode_InternFromString("keys");
    s_values = PyUnicode_InternFromString("values");
    s_getitem = PyUnicode_InternFromString("__getitem__");
    if (!s_buckets || !s_map || !s_counts || !s_items || !s_name || !s_keys || !s_values ||
        !s_getitem)
        return NULL;
    if (PyType_Ready(&RecordMethodType) < 0) return NULL;
    if (PyType_Ready(&VisitedViewType) < 0) return NULL;
    if (PyType_Ready(&FpSetType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "RecordMethod", (PyObject *)&RecordMethodType) < 0 ||
        PyModule_AddObjectRef(m, "FpSet", (PyObject *)&FpSetType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
