/* The public API's handle: a client is its configuration (the protocol's),
 * its connections (the built-in driver's) and the mutex that keeps two
 * threads' rounds off them at once. */
#ifndef HRL_API_H
#define HRL_API_H

#include <pthread.h>

#include "driver/driver.h"
#include "proto/state.h"

struct hrl_client {
  hrl_config cfg;
  hrl_pool pool;
  pthread_mutex_t mu; /* held while a round uses the connections */
  bool fork_prepared; /* mu is held by hrl_client_fork_prepare */
};

#endif
