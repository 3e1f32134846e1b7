/* The inspect script (docs/DESIGN.md, section 3): reads what one master
 * has of a lock, its queue and their owner labels, and writes nothing.
 * KEYS: the lock key, its queue, its waiters, its fence counter and the
 * owner labels' prefix S(K, ":owner:"); ARGV[1]: how many waiters to list.
 * The answer is one bulk string of fields, each "<length>:<bytes>": the
 * master's time (ms), the key's type, its value (a token), its PTTL, the
 * fence counter, the holder's label, the queue's length, then per listed
 * waiter its token, its arrival (score, us), its entry ("expiry window
 * channel") and its label. One string: every driver's reply reader takes
 * it, and the fields are binary-safe. */
#ifndef HRL_INSPECT_SCRIPT_H
#define HRL_INSPECT_SCRIPT_H

#define HRL_INSPECT_SCRIPT                                                     \
  "local k,q,w,f,o=KEYS[1],KEYS[2],KEYS[3],KEYS[4],KEYS[5]\n"                  \
  "local out={}\n"                                                             \
  "local function put(v) v=tostring(v) out[#out+1]=#v..\":\"..v end\n"         \
  "local function typ(x) return redis.call(\"type\",x)[\"ok\"] end\n"          \
  "local function get(x) if typ(x)==\"string\" then return "                   \
  "redis.call(\"get\",x) end return \"\" end\n"                                \
  "local c=redis.call(\"time\")\n"                                             \
  "put(tonumber(c[1])*1000+math.floor(tonumber(c[2])/1000))\n"                 \
  "local t=typ(k)\n"                                                           \
  "put(t)\n"                                                                   \
  "local v=t==\"string\" and redis.call(\"get\",k) or \"\"\n"                  \
  "put(v)\n"                                                                   \
  "put(redis.call(\"pttl\",k))\n"                                              \
  "put(get(f))\n"                                                              \
  "put(v~=\"\" and get(o..v) or \"\")\n"                                       \
  "local n=typ(q)==\"zset\" and redis.call(\"zcard\",q) or 0\n"                \
  "put(n)\n"                                                                   \
  "local hw=typ(w)==\"hash\"\n"                                                \
  "if n>0 then\n"                                                              \
  "for _,h in ipairs(redis.call(\"zrange\",q,0,tonumber(ARGV[1])-1)) do\n"     \
  "put(h) put(redis.call(\"zscore\",q,h)) put(hw and "                         \
  "redis.call(\"hget\",w,h) or \"\") put(get(o..h))\n"                         \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "return table.concat(out)\n"
#define HRL_INSPECT_SHA1 "16f7d90060cbd2027ea1e933c3d9608c8b39a316"

#endif
