/* arraylayer._dispatch: the compiled ``promote_types`` of two Dtypes (see arraylayer/dtypes/promotion.py).
 *
 * It holds no rule. For two positional arguments it reads what the Python function reads first: the policy in force (``_KNOWN_POLICIES[<the setting's value>.name]``), that policy's
 * ``table`` slot, ``table[a][b]``. Where that cell is a Dtype it is the answer. Anything else (a key
 * outside the table, keywords, a weak result, a refused pair, a table not built yet, any error on
 * the way) runs the Python function, which answers and raises as it does without this file.
 *
 * What makes it cheap: a Dtype hashes as its name through a Python ``__hash__`` (a Python call per
 * dict look-up); here the hash is read from the Dtype's ``_hash`` slot and handed to the dict.
 */
#include "_dispatch.h"
#include <structmember.h>

static PyObject *fallback;       /* promotion.promote_types, the Python function */
static PyTypeObject *dtype_type; /* arraylayer.Dtype */
static PyTypeObject *policy_type;/* arraylayer.dtypes.policies.Policy */
static PyObject *known_policies; /* promotion._KNOWN_POLICIES: name -> Policy */
static Py_ssize_t hash_offset, table_offset; /* Dtype._hash, Policy.table (slots) */
static PyObject *public_function, *doc_bytes;
static PyMethodDef promote_def;

/* the offset of cls's slot ``name`` (a writable-or-not object slot), or 0 */
static Py_ssize_t
slot_offset(PyTypeObject *cls, const char *name)
{
    PyObject *key = PyUnicode_FromString(name), *descr;
    Py_ssize_t offset = 0;
    if (key == NULL)
        return -1;
    descr = _PyType_Lookup(cls, key);
    Py_DECREF(key);
    if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX)
            offset = member->offset;
    }
    return offset;
}

/* dict[key] (borrowed), or NULL (missing, or an error: cleared); a Dtype's hash read from its slot */
static inline PyObject *
dtype_item(PyObject *dict, PyObject *key)
{
    PyObject *item;
#if PY_VERSION_HEX < 0x030E0000
    if (Py_TYPE(key) == dtype_type) {
        PyObject *stored = *(PyObject **)((char *)key + hash_offset);
        Py_hash_t hash = stored != NULL && PyLong_CheckExact(stored) ? PyLong_AsSsize_t(stored) : -1;
        if (hash == -1) {
            PyErr_Clear();
            return NULL;
        }
        item = _PyDict_GetItem_KnownHash(dict, key, hash);
    } else
#endif
        item = PyDict_GetItemWithError(dict, key);
    if (item == NULL)
        PyErr_Clear();
    return item;
}

/* table[a][b] of the policy in force when it is a Dtype (new reference), else NULL, no exception */
static PyObject *
known_cell(PyObject *a, PyObject *b)
{
    PyObject *name = al_current_policy(), *policy, *table, *row, *cell;
    if (name == NULL) {
        PyErr_Clear();
        return NULL;
    }
    policy = PyDict_GetItemWithError(known_policies, name); /* borrowed */
    Py_DECREF(name);
    if (policy == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (Py_TYPE(policy) != policy_type)
        return NULL;
    table = *(PyObject **)((char *)policy + table_offset); /* NULL: built on first use, in Python */
    if (table == NULL || !PyDict_CheckExact(table))
        return NULL;
    if ((row = dtype_item(table, a)) == NULL || !PyDict_CheckExact(row))
        return NULL;
    if ((cell = dtype_item(row, b)) == NULL || Py_TYPE(cell) != dtype_type)
        return NULL;
    return Py_NewRef(cell);
}

AL_HOT static PyObject *
promote_types(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs == 2 && kwnames == NULL) { /* table[a][b] as Python reads it first: Dtypes, names, aliases */
        PyObject *cell = known_cell(args[0], args[1]);
        if (cell != NULL)
            return cell;
    }
    return PyObject_Vectorcall(fallback, args, nargs, kwnames);
}

/* promotion(fallback, dtype_class, policy_class, known_policies, doc): the compiled promote_types */
PyObject *
al_promotion(PyObject *module, PyObject *args)
{
    PyObject *function, *dtype_cls, *policy_cls, *known, *doc;
    if (!PyArg_ParseTuple(args, "OO!O!O!U:promotion", &function, &PyType_Type, &dtype_cls, &PyType_Type,
                          &policy_cls, &PyDict_Type, &known, &doc))
        return NULL;
    if (public_function != NULL) /* made once per process: the same function for a second caller */
        return Py_NewRef(public_function);
    Py_ssize_t hash_at = slot_offset((PyTypeObject *)dtype_cls, "_hash");
    Py_ssize_t table_at = slot_offset((PyTypeObject *)policy_cls, "table");
    if (hash_at < 0 || table_at < 0)
        return NULL;
    if (hash_at == 0 || table_at == 0)
        Py_RETURN_NONE; /* not the classes this file reads: the Python function stays */
    if ((doc_bytes = PyUnicode_AsUTF8String(doc)) == NULL)
        return NULL;
    fallback = Py_NewRef(function);
    dtype_type = (PyTypeObject *)Py_NewRef(dtype_cls);
    policy_type = (PyTypeObject *)Py_NewRef(policy_cls);
    known_policies = Py_NewRef(known);
    hash_offset = hash_at;
    table_offset = table_at;
    promote_def.ml_name = "promote_types";
    promote_def.ml_meth = (PyCFunction)(void (*)(void))promote_types;
    promote_def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
    promote_def.ml_doc = PyBytes_AS_STRING(doc_bytes);
    PyObject *module_name = PyObject_GetAttrString(function, "__module__");
    if (module_name == NULL)
        return NULL;
    public_function = PyCFunction_NewEx(&promote_def, NULL, module_name);
    Py_DECREF(module_name);
    return Py_XNewRef(public_function);
}
