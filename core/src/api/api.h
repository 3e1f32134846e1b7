/* The public API's handle: a client is its configuration (the protocol's),
 * its connections (the built-in driver's), the mutex that keeps two
 * threads' rounds off them at once, and the room where its blocking
 * acquires wait for their hand-offs (with its own mutex). */
#ifndef HRL_API_H
#define HRL_API_H

#include <pthread.h>

#include "driver/driver.h"
#include "driver/waitroom.h"
#include "proto/state.h"

struct hrl_client {
  hrl_config cfg;
  hrl_pool pool;
  pthread_mutex_t mu; /* held while a round uses the connections */
  bool fork_prepared; /* mu is held by hrl_client_fork_prepare */
  hrl_waitroom room;  /* never locked with mu held, nor mu with it */
};

#endif
