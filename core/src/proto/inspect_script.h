/* The inspect script (docs/DESIGN.md, section 3): reads what one master
 * has of a lock, its queue and their owner labels, and writes nothing.
 * KEYS: the lock key, its queue, its waiters, its fence counter and the
 * owner labels' prefix S(K, ":owner:"); ARGV[1]: how many waiters to list,
 * ARGV[2]: how many holds. The answer is one bulk string of fields, each
 * "<length>:<bytes>": the master's time (ms), the key's type, its value (a
 * token), its PTTL, the fence counter, the holder's label, the queue's
 * length, the class of the hash's first field (a read-write lock's or
 * semaphore's key: "r", "w" or a permit's number; "" for any other key),
 * the number of live holds in the hash (expiry past the master's time),
 * then per listed hold (by token) its token, class, expiry (ms) and label,
 * then per listed waiter its token, its arrival (score, us), its entry
 * ("expiry window channel") and its label. One string: every driver's
 * reply reader takes it, and the fields are binary-safe. */
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
  "local now=tonumber(c[1])*1000+math.floor(tonumber(c[2])/1000)\n"            \
  "put(now)\n"                                                                 \
  "local t=typ(k)\n"                                                           \
  "put(t)\n"                                                                   \
  "local v=t==\"string\" and redis.call(\"get\",k) or \"\"\n"                  \
  "put(v)\n"                                                                   \
  "put(redis.call(\"pttl\",k))\n"                                              \
  "put(get(f))\n"                                                              \
  "put(v~=\"\" and get(o..v) or \"\")\n"                                       \
  "local n=typ(q)==\"zset\" and redis.call(\"zcard\",q) or 0\n"                \
  "put(n)\n"                                                                   \
  "local hs,kc={},\"\"\n"                                                      \
  "if t==\"hash\" then\n"                                                      \
  "local a=redis.call(\"hgetall\",k)\n"                                        \
  "for i=1,#a,2 do\n"                                                          \
  "local cl,e=string.match(a[i+1],\"^(%S+) (%d+)$\")\n"                        \
  "if cl and kc==\"\" then kc=cl end\n"                                        \
  "if e and tonumber(e)>now then hs[#hs+1]={a[i],cl,e} end\n"                  \
  "end\n"                                                                      \
  "table.sort(hs,function(x,y) return x[1]<y[1] end)\n"                        \
  "end\n"                                                                      \
  "put(kc) put(#hs)\n"                                                         \
  "for i=1,math.min(#hs,tonumber(ARGV[2])) do\n"                               \
  "put(hs[i][1]) put(hs[i][2]) put(hs[i][3]) put(get(o..hs[i][1]))\n"          \
  "end\n"                                                                      \
  "local hw=typ(w)==\"hash\"\n"                                                \
  "if n>0 then\n"                                                              \
  "for _,h in ipairs(redis.call(\"zrange\",q,0,tonumber(ARGV[1])-1)) do\n"     \
  "put(h) put(redis.call(\"zscore\",q,h)) put(hw and "                         \
  "redis.call(\"hget\",w,h) or \"\") put(get(o..h))\n"                         \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "return table.concat(out)\n"
#define HRL_INSPECT_SHA1 "9c2ee863fb59ca6fd088a9cc0e17bc72dddd7f04"

#endif
