/* Python values to the core's C arguments. Range checks and their messages
 * are the core's (its option table, hrl_seconds_to_ms), so every runtime
 * accepts the same values and rejects the others with the same words. */
#include "hrlpy.h"

#include <math.h>
#include <string.h>

/* An int or float (not bool) as a double; huge ints become +/-inf so the
 * range check that follows reports them with the argument's name. */
static int number(PyObject *obj, const char *what, const char *kind,
                  double *out) {
  if (PyFloat_Check(obj)) {
    *out = PyFloat_AS_DOUBLE(obj);
    return 0;
  }
  if (PyLong_Check(obj) && !PyBool_Check(obj)) {
    double v = PyLong_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
        return -1;
      }
      PyErr_Clear();
      int negative = PyObject_RichCompareBool(obj, Py_False, Py_LT);
      if (negative < 0) {
        return -1;
      }
      v = negative ? -INFINITY : INFINITY;
    }
    *out = v;
    return 0;
  }
  PyErr_Format(PyExc_TypeError, "%s must be %s (int or float), not %.100s",
               what, kind, Py_TYPE(obj)->tp_name);
  return -1;
}

int hrlpy_seconds(PyObject *obj, const char *what, double *out) {
  return number(obj, what, "a number of seconds", out);
}

int hrlpy_number(PyObject *obj, const char *what, double *out) {
  return number(obj, what, "a number", out);
}

static int checked_ms(double seconds, const char *what, int64_t min_ms,
                      int64_t max_ms, int64_t *out_ms) {
  char detail[HRL_DETAIL_MAX];
  hrl_status st = hrl_seconds_to_ms(what, seconds, min_ms, max_ms, out_ms,
                                    detail, sizeof detail);
  if (st != HRL_OK) {
    hrlpy_raise_invalid("%s", detail);
    return -1;
  }
  return 0;
}

int hrlpy_ttl_ms(PyObject *obj, const hrl_client *client, int64_t *out_ms) {
  double seconds;
  if (hrlpy_seconds(obj, "ttl", &seconds) < 0) {
    return -1;
  }
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_ttl_seconds(client, seconds, out_ms, detail, sizeof detail) !=
      HRL_OK) {
    hrlpy_raise_invalid("%s", detail);
    return -1;
  }
  return 0;
}

int hrlpy_bytes_view(PyObject *obj, const char *what, const char **data,
                     Py_ssize_t *len) {
  if (PyUnicode_Check(obj)) {
    *data = PyUnicode_AsUTF8AndSize(obj, len);
    return *data == NULL ? -1 : 0;
  }
  if (PyBytes_Check(obj)) {
    *data = PyBytes_AS_STRING(obj);
    *len = PyBytes_GET_SIZE(obj);
    return 0;
  }
  PyErr_Format(PyExc_TypeError, "%s must be str or bytes, not %.100s", what,
               Py_TYPE(obj)->tp_name);
  return -1;
}

int hrlpy_wait_ms(PyObject *timeout, bool blocking, int64_t *wait_ms) {
  double seconds = -1.0;
  if (timeout != NULL && hrlpy_seconds(timeout, "timeout", &seconds) < 0) {
    return -1;
  }
  if (seconds == -1.0) {
    /* threading.Lock: -1 (the default) is "no timeout". */
    *wait_ms = blocking ? HRL_WAIT_FOREVER : 0;
    return 0;
  }
  if (!blocking) {
    hrlpy_raise_invalid("timeout cannot be given with blocking=False (got %g); "
                        "a non-blocking acquire makes one attempt",
                        seconds);
    return -1;
  }
  return checked_ms(seconds, "timeout", 0, HRL_TTL_MAX_MS, wait_ms);
}

/* A choice by name (str), or by its index as an int: ssl_cert_reqs takes
 * ssl.CERT_NONE, CERT_OPTIONAL and CERT_REQUIRED (0, 1, 2: the choices'
 * order) as redis-py does. */
static int choice_value(PyObject *value, const hrl_option *opt,
                        const char **bytes, Py_ssize_t *len) {
  if (PyUnicode_Check(value)) {
    *bytes = PyUnicode_AsUTF8AndSize(value, len);
    return *bytes == NULL ? -1 : 0;
  }
  if (PyLong_Check(value) && !PyBool_Check(value)) {
    long index = PyLong_AsLong(value);
    if (index == -1 && PyErr_Occurred()) {
      return -1; /* too big for a long: OverflowError */
    }
    for (long i = 0; opt->choices[i] != NULL; i++) {
      if (i == index) {
        *bytes = opt->choices[i];
        *len = (Py_ssize_t)strlen(opt->choices[i]);
        return 0;
      }
    }
    /* The core's words for a C enum out of range ("got 7"). */
    char list[128] = "";
    for (int i = 0; opt->choices[i] != NULL; i++) {
      size_t used = strlen(list);
      snprintf(list + used, sizeof list - used, "%s%s", i > 0 ? ", " : "",
               opt->choices[i]);
    }
    if (!PyErr_Occurred()) {
      hrlpy_raise_invalid("%s must be one of %s, got %ld", opt->name, list,
                          index);
    }
    return -1;
  }
  PyErr_Format(PyExc_TypeError, "%s must be str or ssl.VerifyMode, not %.100s",
               opt->name, Py_TYPE(value)->tp_name);
  return -1;
}

int hrlpy_option_value(PyObject *value, const hrl_option *opt, double *number,
                       const char **bytes, Py_ssize_t *len) {
  *number = 0;
  *bytes = NULL;
  *len = 0;
  switch (opt->kind) {
  case HRL_OPTION_DURATION:
    return hrlpy_seconds(value, opt->name, number);
  case HRL_OPTION_NUMBER:
    return hrlpy_number(value, opt->name, number);
  case HRL_OPTION_COUNT:
    if (!PyLong_Check(value) || PyBool_Check(value)) {
      PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", opt->name,
                   Py_TYPE(value)->tp_name);
      return -1;
    }
    /* Out of range (also past a double): the core's words say the bounds. */
    *number = PyLong_AsDouble(value);
    if (*number == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      *number = -1.0;
    }
    return 0;
  case HRL_OPTION_BYTES:
    return hrlpy_bytes_view(value, opt->name, bytes, len);
  case HRL_OPTION_FLAG:
    if (!PyBool_Check(value)) {
      PyErr_Format(PyExc_TypeError, "%s must be a bool, not %.100s", opt->name,
                   Py_TYPE(value)->tp_name);
      return -1;
    }
    *number = value == Py_True ? 1 : 0;
    return 0;
  case HRL_OPTION_STRING:
    if (!PyUnicode_Check(value)) {
      PyErr_Format(PyExc_TypeError,
                   "%s must be str, os.PathLike or None, not %.100s", opt->name,
                   Py_TYPE(value)->tp_name);
      return -1;
    }
    *bytes = PyUnicode_AsUTF8AndSize(value, len);
    return *bytes == NULL ? -1 : 0;
  case HRL_OPTION_CHOICE:
    return choice_value(value, opt, bytes, len);
  case HRL_OPTION_LABEL:
    /* owner=True: host:pid; False: none; else the label's text. */
    if (PyBool_Check(value)) {
      *bytes = value == Py_True ? HRL_OWNER_HOST_PID : NULL;
      *len = value == Py_True ? (Py_ssize_t)strlen(HRL_OWNER_HOST_PID) : 0;
      return 0;
    }
    if (!PyUnicode_Check(value)) {
      PyErr_Format(PyExc_TypeError, "%s must be str, bool or None, not %.100s",
                   opt->name, Py_TYPE(value)->tp_name);
      return -1;
    }
    *bytes = PyUnicode_AsUTF8AndSize(value, len);
    return *bytes == NULL ? -1 : 0;
  }
  return 0;
}

int hrlpy_check_option_keys(PyObject *kwds, const char *func,
                            bool (*accept)(const hrl_option *opt)) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (kwds != NULL && PyDict_Next(kwds, &pos, &key, &value)) {
    const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    const hrl_option *opt = name != NULL ? hrl_option_find(name) : NULL;
    if (opt == NULL || !accept(opt)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "%s() got an unexpected keyword argument '%S'", func, key);
      return -1;
    }
  }
  return 0;
}
