/*
 * hiredlock for language bindings: the one table of options (their names,
 * units, bounds and defaults) and the argument conversions every runtime
 * shares, so that Python, Lua and C accept the same values, reject the
 * others with the same words, and name the option or argument that was
 * wrong. A binding reads the table instead of keeping its own list.
 */
#ifndef HIREDLOCK_BINDING_H
#define HIREDLOCK_BINDING_H

#include "hiredlock.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What an option holds, and so how a binding takes it from its users. */
typedef enum hrl_option_kind {
  HRL_OPTION_DURATION, /**< seconds in Python and Lua, milliseconds in C */
  HRL_OPTION_NUMBER,   /**< a plain number (drift_factor) */
  HRL_OPTION_BYTES,    /**< a byte string (key_prefix); str or bytes */
  HRL_OPTION_FLAG,     /**< true or false (a bool in Python and Lua) */
  HRL_OPTION_STRING,   /**< text without NUL, a path (ssl_ca_certs); a
                            const char * in C, NULL when unset */
  HRL_OPTION_CHOICE,   /**< one of the option's choices, given by name
                            (ssl_cert_reqs); an enum in C, whose value is
                            the choice's index */
  HRL_OPTION_LABEL,    /**< text (owner), or true for its default
                            HRL_OWNER_HOST_PID; false or nil/None: none. A
                            const char * in C, NULL for none */
  HRL_OPTION_COUNT     /**< a whole number (sync_replicas): an int in
                            Python, an integral number in Lua, a uint32_t
                            in C */
} hrl_option_kind;

/** Where an option is given. */
typedef enum hrl_option_scope {
  HRL_SCOPE_CLIENT, /**< to the client only: a field of hrl_options */
  HRL_SCOPE_LOCK,   /**< to each lock only: a field of hrl_lock_options */
  /** To each lock, with a default the client may set for all its locks:
   *  a field of hrl_lock_options, and of hrl_options.lock. */
  HRL_SCOPE_LOCK_DEFAULT
} hrl_option_scope;

/** One option. Bounds and default are in C units: milliseconds for a
 *  duration, the value for a number, the length in bytes for bytes. */
typedef struct hrl_option {
  const char *name; /**< spelled the same in every runtime */
  hrl_option_kind kind;
  hrl_option_scope scope;
  double min;      /**< smallest value accepted */
  double max;      /**< largest value accepted (excluded when max_open) */
  bool max_open;   /**< max itself is out of range */
  double def;      /**< the default (bytes: always empty; string: unset;
                        choice: the index of the default choice) */
  const char *doc; /**< one line for help texts */
  const char *const *choices; /**< CHOICE: the names, NULL-terminated */
} hrl_option;

/** The option table, in the order help texts list it; *count its size. */
HRL_API const hrl_option *hrl_options_table(size_t *count);

/** The option called name, or NULL when there is none. */
HRL_API const hrl_option *hrl_option_find(const char *name);

/** The index of the choice called name of a CHOICE option, or -1. */
HRL_API int hrl_option_choice(const hrl_option *opt, const char *name,
                              size_t len);

/**
 * Converts a duration option given in seconds to milliseconds within the
 * option's bounds (hrl_seconds_to_ms with the option's name and bounds).
 */
HRL_API hrl_status hrl_option_seconds(const hrl_option *opt, double seconds,
                                      int64_t *out_ms, char *detail,
                                      size_t detail_size);

/**
 * Checks a client option's value and stores it in opts: a duration as
 * seconds in `number`, a number or a count in `number`, a flag as non-zero
 * `number`, bytes, a string or a choice's name in bytes/len (which opts then
 * points to: keep them alive until hrl_client_new() copied them; a string must
 * be NUL-terminated at len). HRL_EINVAL with detail naming the option when
 * the value is out of range or opt is not a client option. Options of
 * scope HRL_SCOPE_LOCK_DEFAULT set the default of the client's locks.
 */
HRL_API hrl_status hrl_options_set(hrl_options *opts, const hrl_option *opt,
                                   double number, const char *bytes, size_t len,
                                   char *detail, size_t detail_size);

/**
 * Checks a lock option's value (scope HRL_SCOPE_LOCK or
 * HRL_SCOPE_LOCK_DEFAULT) and stores it in lock_opts, as hrl_options_set
 * does for client options (a flag: number non-zero). A client's default
 * for its locks is set with hrl_options_set on the same option. Not for
 * "ttl", whose bounds depend on the client: hrl_client_ttl_seconds.
 */
HRL_API hrl_status hrl_lock_options_set(hrl_lock_options *lock_opts,
                                        const hrl_option *opt, double number,
                                        char *detail, size_t detail_size);

/**
 * A mode from its name: "lock", "read", "write" or "permit" (how the
 * bindings' `mode` option spells it) into *out. HRL_EINVAL with the
 * choices in detail for any other.
 */
HRL_API hrl_status hrl_lock_mode_parse(const char *name, size_t len,
                                       hrl_lock_mode *out, char *detail,
                                       size_t detail_size);

/**
 * A semaphore's permits as the bindings take them (a whole number from 1
 * to HRL_PERMITS_MAX) into *out, with the core's words when not.
 */
HRL_API hrl_status hrl_lock_permits_parse(double permits, uint32_t *out,
                                          char *detail, size_t detail_size);

/**
 * Checks a mode and permits together (a permit needs 1 to
 * HRL_PERMITS_MAX permits, any other mode none), as hrl_lock_new_mode()
 * will: for a binding to name the options argument in its error.
 */
HRL_API hrl_status hrl_lock_mode_check(hrl_lock_mode mode, uint32_t permits,
                                       char *detail, size_t detail_size);

/** The name of a mode ("lock", "read", "write", "permit"; "?" when out of
 *  range). */
HRL_API const char *hrl_lock_mode_name(hrl_lock_mode mode);

/**
 * A lock object of any mode: hrl_lock_new_with() for HRL_MODE_LOCK (permits
 * 0), hrl_rwlock_new() for a read or write, hrl_permit_new() for a permit
 * of a semaphore of `permits`: for a binding whose `mode` option picks one.
 */
HRL_API hrl_status hrl_lock_new_mode(hrl_client *client, const void *name,
                                     size_t name_len,
                                     const hrl_lock_options *opts,
                                     hrl_lock_mode mode, uint32_t permits,
                                     hrl_lock **out, char *detail,
                                     size_t detail_size);

/**
 * Checks a lock option of kind HRL_OPTION_LABEL (owner) and stores it in
 * lock_opts: text of len bytes (lock_opts then points to it: keep it alive
 * until hrl_lock_new_with() copied it), or NULL for none. HRL_EINVAL with
 * detail naming the option when the text is refused.
 */
HRL_API hrl_status hrl_lock_options_set_text(hrl_lock_options *lock_opts,
                                             const hrl_option *opt,
                                             const char *text, size_t len,
                                             char *detail, size_t detail_size);

/*
 * Events for bindings, which cannot run their callbacks where the core
 * reports them (in the renewer thread, under the client's mutex): the core
 * keeps a client's events in a queue of its own, and the binding takes
 * them where it may run code (after each call, in a thread of its own).
 */

/** An event kept in a client's queue: hrl_event with its strings in it. */
typedef struct hrl_event_record {
  hrl_event ev; /**< its pointers point into this record */
  char name[HRL_NAME_MAX];
  char master_label[256];
  char detail[HRL_DETAIL_MAX];
} hrl_event_record;

/**
 * Queues client's events, up to capacity (at least 1) of them; more are
 * dropped and counted until some are taken. The queue takes its room as
 * events come, not up front (an event that finds no memory is dropped and
 * counted the same way), so a client made per request costs no more for
 * it. The first call's capacity holds. posted (may be NULL) is
 * called with user_data after each event is queued, in the thread that
 * reported it, with no mutex held: to wake the taker, no more. Replaces
 * hrl_client_on_event's callback. HRL_ENOMEM.
 */
HRL_API hrl_status hrl_client_queue_events(hrl_client *client, size_t capacity,
                                           void (*posted)(void *user_data),
                                           void *user_data);

/** Whether events are queued: one atomic read, for a binding's fast path. */
HRL_API bool hrl_client_events_pending(const hrl_client *client);

/**
 * Takes up to max queued events, oldest first, into out (their pointers
 * into out[k]); returns how many. *dropped (may be NULL) receives how many
 * were dropped since the last take for want of room.
 */
HRL_API size_t hrl_client_take_events(hrl_client *client, hrl_event_record *out,
                                      size_t max, uint64_t *dropped);

/**
 * A lock's TTL given in seconds (to a new lock or an extend), as
 * milliseconds within what client accepts: [hrl_client_min_ttl_ms(),
 * HRL_TTL_MAX_MS]. The message names "ttl" and the smallest TTL accepted.
 */
HRL_API hrl_status hrl_client_ttl_seconds(const hrl_client *client,
                                          double seconds, int64_t *out_ms,
                                          char *detail, size_t detail_size);

/**
 * Loads master i's TLS settings (its CA file or directory, client
 * certificate and key) as the built-in driver does at its first connect:
 * true when they load or master i is not a rediss:// one, else false with
 * msg in the built-in driver's words ("TLS: ssl_certfile (its key) /x:
 * no start line"). For a binding's own driver (asyncio) that loads them
 * with another library: it reports a bad setting in the same words as
 * every other runtime. Loads the files anew each call; keeps nothing.
 */
HRL_API bool hrl_client_tls_check(const hrl_client *client, size_t i, char *msg,
                                  size_t size);

/**
 * Seconds (Python, Lua) to wire milliseconds for arguments that are not
 * options (an acquire's wait, an extend's TTL): finite seconds in
 * [min_ms/1000, max_ms/1000], rounded to the nearest millisecond; a
 * positive value that rounds below min_ms is rejected too. NaN, infinities
 * and out-of-range values give HRL_EINVAL with a message naming `what`.
 */
HRL_API hrl_status hrl_seconds_to_ms(const char *what, double seconds,
                                     int64_t min_ms, int64_t max_ms,
                                     int64_t *out_ms, char *detail,
                                     size_t detail_size);

#ifdef __cplusplus
}
#endif

#endif /* HIREDLOCK_BINDING_H */
