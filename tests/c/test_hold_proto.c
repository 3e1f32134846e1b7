/* Read-write lock and semaphore holds in the sans-I/O protocol, without
 * Redis: the bytes of their rounds (docs/DESIGN.md section 3), what their
 * replies mean, and a semaphore's settle when masters grant different
 * permits, driven by hand with a fake transport. */
#include <stdlib.h>

#include "check.h"
#include "proto/hold_script.h"
#include "proto/resp.h"

static const char *const three[] = {
    "redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3"};

#define TOKEN "0123456789abcdef0123456789abcdef"

static void test_command_bytes(void) {
  char buf[8192];
  hrl_command_args a = {"res",
                        3,
                        "res{res}:queue",
                        14,
                        "res{res}:waiters",
                        16,
                        "res{res}:fence",
                        14,
                        TOKEN,
                        30000,
                        1700000000000001,
                        2000,
                        410,
                        "chan",
                        4,
                        HRL_MODE_PERMIT,
                        5,
                        2,
                        false};
  size_t n = hrl_resp_command(buf, HRL_ROUND_TRY, true, &a);
  const char want_try[] =
      "*16\r\n$7\r\nEVALSHA\r\n$40\r\n" HRL_SEM_SHA1
      "\r\n$1\r\n4\r\n$3\r\nres\r\n$14\r\nres{res}:queue\r\n"
      "$16\r\nres{res}:waiters\r\n$14\r\nres{res}:fence\r\n$1\r\nt\r\n"
      "$32\r\n" TOKEN "\r\n$5\r\n30000\r\n$16\r\n1700000000000001\r\n"
      "$4\r\n2000\r\n$3\r\n410\r\n$4\r\nchan\r\n$1\r\n5\r\n$1\r\n2\r\n";
  CHECK_INT(n, sizeof want_try - 1);
  CHECK(memcmp(buf, want_try, n) == 0);

  a.mode = HRL_MODE_READ;
  a.permits = 0;
  a.permit = 0;
  a.fence_key = NULL;
  a.fence_key_len = 0;
  a.arrival_us = 0;
  n = hrl_resp_command(buf, HRL_ROUND_SET, true, &a);
  const char want_first[] =
      "*15\r\n$7\r\nEVALSHA\r\n$40\r\n" HRL_RW_SHA1
      "\r\n$1\r\n3\r\n$3\r\nres\r\n$14\r\nres{res}:queue\r\n"
      "$16\r\nres{res}:waiters\r\n$1\r\nn\r\n$32\r\n" TOKEN
      "\r\n$5\r\n30000\r\n$1\r\n0\r\n$4\r\n2000\r\n$3\r\n410\r\n"
      "$4\r\nchan\r\n$1\r\nr\r\n$1\r\n0\r\n";
  CHECK_INT(n, sizeof want_first - 1);
  CHECK(memcmp(buf, want_first, n) == 0);

  a.mode = HRL_MODE_WRITE;
  n = hrl_resp_command(buf, HRL_ROUND_EXTEND, true, &a);
  const char want_extend[] = "*8\r\n$7\r\nEVALSHA\r\n$40\r\n" HRL_RW_SHA1
                             "\r\n$1\r\n1\r\n$3\r\nres\r\n$1\r\ne\r\n"
                             "$32\r\n" TOKEN "\r\n$5\r\n30000\r\n$1\r\n0\r\n";
  CHECK_INT(n, sizeof want_extend - 1);
  CHECK(memcmp(buf, want_extend, n) == 0);

  n = hrl_resp_command(buf, HRL_ROUND_RELEASE, false, &a);
  CHECK(memcmp(buf, "*8\r\n$4\r\nEVAL\r\n$", 15) == 0);
  CHECK(memmem(buf, n, HRL_RW_SCRIPT, strlen(HRL_RW_SCRIPT)) != NULL);
  CHECK(memmem(buf, n, "$1\r\nr\r\n$32\r\n" TOKEN "\r\n", 45) != NULL);

  n = hrl_resp_plain_release(buf, &a);
  const char want_hdel[] =
      "*3\r\n$4\r\nHDEL\r\n$3\r\nres\r\n$32\r\n" TOKEN "\r\n";
  CHECK_INT(n, sizeof want_hdel - 1);
  CHECK(memcmp(buf, want_hdel, n) == 0);
}

static hrl_reply grant_elements[3][2];

/* A script's grant: {permit, fence}. */
static hrl_reply grant(size_t slot, long long permit, const char *fence) {
  grant_elements[slot][0] = int_reply(permit);
  grant_elements[slot][1] =
      (hrl_reply){HRL_REPLY_STRING, 0, fence, strlen(fence), 0, NULL};
  return (hrl_reply){HRL_REPLY_ARRAY, 0, NULL, 0, 2, grant_elements[slot]};
}

static hrl_lock *permit_lock(hrl_client *c, uint32_t permits) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_permit_new(c, "res", 3, permits, NULL, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

/* Masters 1 and 3 grant permit 1, master 2 permit 2: the hold is permit 1
 * on two masters; master 2's grant is no vote. The extend names permit 1,
 * the release goes to all three. */
static void test_a_semaphore_settles_on_the_permit_most_granted(void) {
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(three, 3, NULL, &c, NULL, 0), HRL_OK);
  hrl_lock *lk = permit_lock(c, 2);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(lk, t, &s), HRL_STEP_ROUND);
  hrl_reply replies[3] = {grant(0, 1, "0"), grant(1, 2, "0"), grant(2, 1, "0")};
  for (size_t i = 0; i < 3; i++) {
    size_t len;
    const char *cmd = hrl_proto_command(lk, i, &len);
    CHECK(cmd != NULL && memmem(cmd, len, HRL_SEM_SHA1, 40) != NULL);
    hrl_proto_reply(lk, i, &replies[i]);
  }
  CHECK_INT(hrl_proto_step(lk, t + 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_permit(lk), 1);
  hrl_counts cnt;
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.ok, 2);
  CHECK_INT(cnt.refused, 1);

  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_EXTEND, 0, t + 2000), HRL_OK);
  CHECK_INT(hrl_proto_step(lk, t + 2000, &s), HRL_STEP_ROUND);
  size_t len;
  const char *cmd = hrl_proto_command(lk, 0, &len);
  CHECK(cmd != NULL && len > 7 && memcmp(cmd + len - 7, "$1\r\n1\r\n", 7) == 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* A grant that makes no sense (a permit out of range, a fence that is not
 * a number) is a protocol error, never a vote. */
static void test_nonsense_grants_are_protocol_errors(void) {
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(three, 1, NULL, &c, NULL, 0), HRL_OK);
  const struct {
    long long permit;
    const char *fence;
  } bad[] = {{0, "0"}, {100001, "0"}, {1, "x"}, {1, ""}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    hrl_lock *lk = permit_lock(c, 2);
    int64_t t = hrl_now_us();
    hrl_step_info s;
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
    CHECK_INT(hrl_proto_step(lk, t, &s), HRL_STEP_ROUND);
    hrl_reply r = grant(0, bad[k].permit, bad[k].fence);
    size_t len;
    CHECK(hrl_proto_command(lk, 0, &len) != NULL);
    CHECK_INT(hrl_proto_reply(lk, 0, &r), HRL_NODE_PROTOCOL);
    hrl_lock_free(lk);
  }
  hrl_client_free(c);
}

/* Masters 1 and 2 grant different permits, master 3 has not answered:
 * two OKs are no quorum for one permit, so the round is not settled (a
 * late master 3 is still waited for: its grant may make either permit's
 * quorum). Before hrl_hold_votes it counted OKs of any permit and settled,
 * and the attempt lost master 3's vote. */
static void test_a_round_settles_on_one_permits_votes(void) {
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(three, 3, NULL, &c, NULL, 0), HRL_OK);
  hrl_lock *lk = permit_lock(c, 2);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(lk, t, &s), HRL_STEP_ROUND);
  hrl_reply one = grant(0, 1, "0"), two = grant(1, 2, "0");
  size_t len;
  for (size_t i = 0; i < 3; i++) {
    CHECK(hrl_proto_command(lk, i, &len) != NULL);
  }
  hrl_proto_reply(lk, 0, &one);
  hrl_proto_reply(lk, 1, &two);
  CHECK(!hrl_proto_settled(lk));
  hrl_reply again = grant(2, 2, "0");
  hrl_proto_reply(lk, 2, &again);
  CHECK(hrl_proto_settled(lk));
  CHECK_INT(hrl_proto_step(lk, t + 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_permit(lk), 2);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* The scripts' HRLKIND error: the name is a lock of another kind. The
 * acquire ends at once, whatever its wait, with HRL_EINVAL and the core's
 * words; a mutex's waiting try is told so by the queue script. */
static void test_a_name_of_another_kind_is_einval(void) {
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(three, 1, NULL, &c, NULL, 0), HRL_OK);
  hrl_lock *lk = permit_lock(c, 2);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 5000, t), HRL_OK);
  CHECK_INT(hrl_proto_step(lk, t, &s), HRL_STEP_ROUND);
  size_t len;
  CHECK(hrl_proto_command(lk, 0, &len) != NULL);
  hrl_reply kind = error_reply("HRLKIND lock");
  hrl_proto_reply(lk, 0, &kind);
  CHECK_INT(hrl_proto_step(lk, t + 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EINVAL);
  CHECK_STR(hrl_lock_error(lk), "'res' is a lock on 127.0.0.1:1, not a "
                                "semaphore (a name is one kind of lock)");
  hrl_lock_free(lk);

  hrl_lock *m = NULL;
  CHECK_STATUS(hrl_lock_new(c, "res", 3, 30000, &m, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_proto_begin(m, HRL_OP_ACQUIRE, 5000, t), HRL_OK);
  CHECK_INT(hrl_proto_step(m, t, &s), HRL_STEP_ROUND);
  CHECK(hrl_proto_command(m, 0, &len) != NULL);
  hrl_reply taken = nil_reply(); /* SET NX: held */
  hrl_proto_reply(m, 0, &taken);
  CHECK_INT(hrl_proto_step(m, t + 1000, &s), HRL_STEP_ROUND); /* the try */
  CHECK(hrl_proto_command(m, 0, &len) != NULL);
  hrl_reply hold = error_reply("HRLKIND hold");
  hrl_proto_reply(m, 0, &hold);
  int64_t at = t + 2000;
  hrl_step step = hrl_proto_step(m, at, &s);
  if (step == HRL_STEP_ROUND) { /* the leave */
    CHECK(hrl_proto_command(m, 0, &len) != NULL);
    hrl_reply zero = int_reply(0);
    hrl_proto_reply(m, 0, &zero);
    step = hrl_proto_step(m, at + 1000, &s);
  }
  CHECK_INT(step, HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EINVAL);
  CHECK_STR(hrl_lock_error(m),
            "'res' is a read-write lock or semaphore on 127.0.0.1:1, not a "
            "lock (a name is one kind of lock)");
  hrl_lock_free(m);
  hrl_client_free(c);
}

int main(void) {
  RUN(test_command_bytes);
  RUN(test_a_round_settles_on_one_permits_votes);
  RUN(test_a_name_of_another_kind_is_einval);
  RUN(test_a_semaphore_settles_on_the_permit_most_granted);
  RUN(test_nonsense_grants_are_protocol_errors);
  return finish_tests("test_hold_proto");
}
