/* CLOCK_MONOTONIC readings and sleeps. */
#ifndef HRL_CLOCK_H
#define HRL_CLOCK_H

#include <stdint.h>

/* Sleeps for ms milliseconds, resuming after signals. */
void hrl_sleep_ms(uint32_t ms);

#endif
