/* The scripts of the holds that share a name: the reads and the write of a
 * read-write lock, and the permits of a counting semaphore (hold.c,
 * docs/DESIGN.md section 3). One text each, byte for byte as every runtime
 * sends it; both are HRL_HOLD_HEAD, their rules, then HRL_HOLD_TAIL.
 *
 * KEYS: k (a hash: holder token -> "<class> <expiry>", the expiry in the
 * master's milliseconds, the class "r" or "w" for a read-write lock, the
 * permit's number for a semaphore), its queue q and waiters w (as the
 * lock's queue: a sorted set token -> arrival, a hash token -> "<expiry>
 * <window> <class> <channel>", the class a waiter asks for: "r", "w" or
 * its semaphore's permits), and the counter c of a fenced hold (absent:
 * not fenced). Expired holders are dropped whenever the hash is read, and
 * k always expires with its longest hold (PEXPIRE), so no key outlives its
 * last holder. ARGV[1] is the mode:
 *   n token ttl arrival lease window channel class slot: an acquire's
 *     first attempt (no queue entry): granted when the waiters queued
 *     before it (served first, as below) left room for it.
 *   t (the same arguments): a waiter's try: claims a hold handed to its
 *     token, else (re)enqueues it and serves the queue in arrival order
 *     (each live entry that fits gets a hold, a hand-off for the others:
 *     HSET with the entry's window, PUBLISH its channel; the first that
 *     does not fit stops the walk), itself included.
 *   a (the same arguments): steps aside: drops its hold, stays queued,
 *     serves the queue behind it. 0.
 *   r token: release (and leave): drops its hold and its entry, serves
 *     the queue. 1 when it held, else 0.
 *   e token ttl slot: extend (KEYS: k alone): 1 when the token holds (at
 *     that permit, unless slot is 0), else 0.
 *   f token fence slot: the fence round: while the token holds, raise c
 *     to the fence (as HRL_FENCE_SCRIPT). 1 or 0.
 * n and t answer {permit, fence} when granted (permit 0 for a read-write
 * lock; fence the counter as text: incremented for a write or a permit,
 * read for a read, "0" unfenced) and otherwise the milliseconds until the
 * holds in the way expire (-2: none in the way but the queue; never -1,
 * which says a key without a TTL to the waiting code, waiting.c).
 * A hold of another kind on k (a mutex's string: "lock", a semaphore's
 * permits or a read-write lock's reads and write) refuses n, t and a with
 * the error "HRLKIND <its kind>" before changing anything but expired
 * holders and lapsed entries (hold.c words it); so does a live waiter of
 * another kind first in its queue: holders and waiters are all of one
 * kind, a name is one kind of lock at a time. r, e and f answer 0 on a
 * mutex's string.
 * A read fits when no write is held; a write when nothing is; a permit
 * while fewer holds than the class (the asker's permits) are held, and
 * takes the slot it asks for when free, else the lowest free one. */
#ifndef HRL_HOLD_SCRIPT_H
#define HRL_HOLD_SCRIPT_H

#define HRL_HOLD_HEAD                                                          \
  "local k,q,w,c,m,t=KEYS[1],KEYS[2],KEYS[3],KEYS[4],ARGV[1],ARGV[2]\n"        \
  "local tm=redis.call(\"time\")\n"                                            \
  "local now=tonumber(tm[1])*1000+math.floor(tonumber(tm[2])/1000)\n"          \
  "local cls,exp,n={},{},0\n"                                                  \
  "local ty=redis.call(\"type\",k).ok\n"                                       \
  "if ty==\"string\" then\n"                                                   \
  "if m==\"n\" or m==\"t\" or m==\"a\" then return "                           \
  "redis.error_reply(\"HRLKIND lock\") end\n"                                  \
  "return 0\n"                                                                 \
  "end\n"                                                                      \
  "local raw=redis.call(\"hgetall\",k)\n"                                      \
  "for i=1,#raw,2 do\n"                                                        \
  "local x,e=string.match(raw[i+1],\"^(%S+) (%d+)$\")\n"                       \
  "if e and tonumber(e)>now then cls[raw[i]]=x exp[raw[i]]=tonumber(e) "       \
  "n=n+1\n"                                                                    \
  "else redis.call(\"hdel\",k,raw[i]) end\n"                                   \
  "end\n"                                                                      \
  "local function keep()\n"                                                    \
  "local top=0\n"                                                              \
  "for _,e in pairs(exp) do if e>top then top=e end end\n"                     \
  "if top>now then redis.call(\"pexpire\",k,top-now) end\n"                    \
  "end\n"                                                                      \
  "local function put(h,x,ms)\n"                                               \
  "cls[h]=x exp[h]=now+ms n=n+1\n"                                             \
  "redis.call(\"hset\",k,h,x..\" \"..exp[h])\n"                                \
  "end\n"                                                                      \
  "local function drop(h) redis.call(\"zrem\",q,h) redis.call(\"hdel\",w,h) "  \
  "end\n"                                                                      \
  "local function entry(h)\n"                                                  \
  "local e,x,a,ch=string.match(redis.call(\"hget\",w,h) or \"\",\"^(%d+) "     \
  "(%d+) (%S+) (.+)$\")\n"                                                     \
  "if e and tonumber(e)>now then return tonumber(x),a,ch end\n"                \
  "drop(h)\n"                                                                  \
  "end\n"

#define HRL_RW_RULES                                                           \
  "local other=\"semaphore\"\n"                                                \
  "local function mine(x) return x==\"r\" or x==\"w\" end\n"                   \
  "local function can(a)\n"                                                    \
  "if a==\"w\" then return n==0 end\n"                                         \
  "for _,x in pairs(cls) do if x==\"w\" then return false end end\n"           \
  "return true\n"                                                              \
  "end\n"                                                                      \
  "local function pick(h,a) return a end\n"                                    \
  "local function hint(a)\n"                                                   \
  "local top=-2\n"                                                             \
  "for h,x in pairs(cls) do if a==\"w\" or x==\"w\" then "                     \
  "top=math.max(top,exp[h]-now) end end\n"                                     \
  "return top\n"                                                               \
  "end\n"

#define HRL_SEM_RULES                                                          \
  "local other=\"rwlock\"\n"                                                   \
  "local function mine(x) return string.match(x,\"^%d+$\")~=nil end\n"         \
  "local function can(a) return n<tonumber(a) end\n"                           \
  "local function pick(h,a)\n"                                                 \
  "local used={}\n"                                                            \
  "for _,x in pairs(cls) do used[x]=true end\n"                                \
  "local s=ARGV[9]\n"                                                          \
  "if h==t and s and s~=\"0\" and tonumber(s)<=tonumber(a) and not used[s] "   \
  "then return s end\n"                                                        \
  "for i=1,tonumber(a) do if not used[tostring(i)] then return tostring(i) "   \
  "end end\n"                                                                  \
  "end\n"                                                                      \
  "local function hint(a)\n"                                                   \
  "if n<tonumber(a) then return -2 end\n"                                      \
  "local low\n"                                                                \
  "for _,e in pairs(exp) do if not low or e<low then low=e end end\n"          \
  "return low-now\n"                                                           \
  "end\n"

#define HRL_HOLD_TAIL                                                          \
  "if m==\"n\" or m==\"t\" or m==\"a\" then\n"                                 \
  "for _,x in pairs(cls) do if not mine(x) then return "                       \
  "redis.error_reply(\"HRLKIND \"..other) end end\n"                           \
  "while true do\n"                                                            \
  "local h=redis.call(\"zrange\",q,0,0)[1]\n"                                  \
  "if not h then break end\n"                                                  \
  "local x,a=entry(h)\n"                                                       \
  "if x then\n"                                                                \
  "if h~=t and not mine(a) then return "                                       \
  "redis.error_reply(\"HRLKIND \"..other) end\n"                               \
  "break\n"                                                                    \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "local function fill(me,skip)\n"                                             \
  "local i=0\n"                                                                \
  "while true do\n"                                                            \
  "local h=redis.call(\"zrange\",q,i,i)[1]\n"                                  \
  "if not h then return nil end\n"                                             \
  "local x,a,ch=entry(h)\n"                                                    \
  "if x then\n"                                                                \
  "if h==skip then i=i+1\n"                                                    \
  "elseif not can(a) then return false\n"                                      \
  "elseif h==me then drop(h) return true\n"                                    \
  "else put(h,pick(h,a),x) drop(h) redis.call(\"publish\",ch,h) end\n"         \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "local function fence(x)\n"                                                  \
  "if not c then return \"0\" end\n"                                           \
  "if x==\"r\" then\n"                                                         \
  "local v=redis.call(\"get\",c)\n"                                            \
  "if not v then v=\"1\" redis.call(\"set\",c,v) end\n"                        \
  "return v\n"                                                                 \
  "end\n"                                                                      \
  "redis.call(\"incr\",c)\n"                                                   \
  "return redis.call(\"get\",c)\n"                                             \
  "end\n"                                                                      \
  "local function free(h)\n"                                                   \
  "if cls[h] then redis.call(\"hdel\",k,h) cls[h]=nil exp[h]=nil n=n-1 "       \
  "return 1 end\n"                                                             \
  "return 0\n"                                                                 \
  "end\n"                                                                      \
  "if m==\"r\" then\n"                                                         \
  "local was=free(t)\n"                                                        \
  "if redis.call(\"exists\",q)==1 then drop(t) fill() end\n"                   \
  "keep()\n"                                                                   \
  "return was\n"                                                               \
  "end\n"                                                                      \
  "local ttl=tonumber(ARGV[3])\n"                                              \
  "if m==\"e\" or m==\"f\" then\n"                                             \
  "local s=ARGV[4]\n"                                                          \
  "if not cls[t] or (s~=\"0\" and cls[t]~=s) then return 0 end\n"              \
  "if m==\"e\" then\n"                                                         \
  "exp[t]=now+ttl redis.call(\"hset\",k,t,cls[t]..\" \"..exp[t]) keep()\n"     \
  "return 1\n"                                                                 \
  "end\n"                                                                      \
  "local v,f=redis.call(\"get\",c) or \"0\",ARGV[3]\n"                         \
  "if v==f then return 1 end\n"                                                \
  "if #v>#f then return 0 end\n"                                               \
  "if #v==#f then for i=1,#f do local x,y=v:byte(i),f:byte(i) if x~=y then "   \
  "if x>y then return 0 end break end end end\n"                               \
  "redis.call(\"set\",c,f)\n"                                                  \
  "return 1\n"                                                                 \
  "end\n"                                                                      \
  "local a=ARGV[8]\n"                                                          \
  "local function enqueue()\n"                                                 \
  "local lease=tonumber(ARGV[5])\n"                                            \
  "redis.call(\"zadd\",q,ARGV[4],t)\n"                                         \
  "redis.call(\"hset\",w,t,string.format(\"%d %d "                             \
  "\",now+lease,math.min(ttl,tonumber(ARGV[6])))..a..\" \"..ARGV[7])\n"        \
  "if redis.call(\"pttl\",q)<lease then redis.call(\"pexpire\",q,lease) "      \
  "redis.call(\"pexpire\",w,lease) end\n"                                      \
  "end\n"                                                                      \
  "if m==\"a\" then\n"                                                         \
  "free(t) enqueue() fill(nil,t) keep()\n"                                     \
  "return 0\n"                                                                 \
  "end\n"                                                                      \
  "if cls[t] then\n"                                                           \
  "drop(t)\n"                                                                  \
  "local f=fence(cls[t])\n"                                                    \
  "exp[t]=now+ttl redis.call(\"hset\",k,t,cls[t]..\" \"..exp[t]) keep()\n"     \
  "return {tonumber(cls[t]) or 0,f}\n"                                         \
  "end\n"                                                                      \
  "if m==\"t\" then enqueue() end\n"                                           \
  "local won=fill(t)\n"                                                        \
  "if won or (won==nil and can(a)) then\n"                                     \
  "drop(t)\n"                                                                  \
  "local f=fence(a)\n"                                                         \
  "put(t,pick(t,a),ttl) keep()\n"                                              \
  "return {tonumber(cls[t]) or 0,f}\n"                                         \
  "end\n"                                                                      \
  "keep()\n"                                                                   \
  "return hint(a)\n"

#define HRL_RW_SCRIPT HRL_HOLD_HEAD HRL_RW_RULES HRL_HOLD_TAIL
#define HRL_RW_SHA1 "a6dab9793c988e855009d68407ecfbdb407d92f9"
#define HRL_SEM_SCRIPT HRL_HOLD_HEAD HRL_SEM_RULES HRL_HOLD_TAIL
#define HRL_SEM_SHA1 "1313f93bc3dca45e0a8405cbe21b71fef31220dd"

#endif
