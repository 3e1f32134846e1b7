/* Argument matching for METH_FASTCALL | METH_KEYWORDS methods: no tuple or
 * dict is built on the hot path (acquire and release are called in tight
 * loops), and errors read like CPython's own. */
#include "hrlpy.h"

#include <string.h>

static Py_ssize_t find_name(const char *const *names, PyObject *key) {
  Py_ssize_t len;
  const char *k = PyUnicode_AsUTF8AndSize(key, &len);
  if (k == NULL) {
    return -2;
  }
  for (Py_ssize_t i = 0; names[i] != NULL; i++) {
    /* The first byte first: most names differ there, and k is never
     * empty when it matches (names are). */
    if (k[0] == names[i][0] && (size_t)len == strlen(names[i]) &&
        memcmp(k, names[i], len) == 0) {
      return i;
    }
  }
  return -1;
}

int hrlpy_parse_args(const char *func, const char *const *names,
                     Py_ssize_t n_positional, PyObject *const *args,
                     Py_ssize_t nargs, PyObject *kwnames, PyObject **out) {
  Py_ssize_t n_names = 0;
  while (names[n_names] != NULL) {
    out[n_names++] = NULL;
  }
  if (nargs > n_positional) {
    PyErr_Format(PyExc_TypeError,
                 "%s() takes at most %zd positional argument%s (%zd given)",
                 func, n_positional, n_positional == 1 ? "" : "s", nargs);
    return -1;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) {
    out[i] = args[i];
  }
  Py_ssize_t n_kw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < n_kw; k++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t i = find_name(names, key);
    if (i == -2) {
      return -1;
    }
    if (i < 0) {
      PyErr_Format(PyExc_TypeError,
                   "%s() got an unexpected keyword argument '%U'", func, key);
      return -1;
    }
    if (out[i] != NULL) {
      PyErr_Format(PyExc_TypeError,
                   "%s() got multiple values for argument '%s'", func,
                   names[i]);
      return -1;
    }
    out[i] = args[nargs + k];
  }
  return 0;
}
