/* test_inspect.c: the engine side of the inspector that needs no session: a sweep's list and
 * ranges parse to the values they name and stop at their bound, however close to INT64_MAX
 * (no signed overflow: `make check` under --enable-asan runs this with UBSan), and the size of
 * a case the inspector would build is counted without overflow and refused past the budget; and
 * the grouping of causes the inspector's and the reports' verdict lists show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract/contract.h"
#include "engine/inspect.h"
#include "engine/verdict.h"

#define MAXV 64

static void test_sweep_ranges_name_their_values(void **state)
{
    int64_t v[MAXV];
    struct kg_err e;
    assert_int_equal(kg_sweep_parse("2..16*2", v, MAXV, &e), 4);
    assert_true(v[0] == 2 && v[1] == 4 && v[2] == 8 && v[3] == 16);
    assert_int_equal(kg_sweep_parse("1..10+4", v, MAXV, &e), 3);
    assert_true(v[0] == 1 && v[1] == 5 && v[2] == 9);
    assert_int_equal(kg_sweep_parse("3..5", v, MAXV, &e), 3);
    assert_true(v[0] == 3 && v[2] == 5);
    assert_int_equal(kg_sweep_parse("1,7,255", v, MAXV, &e), 3);
    assert_true(v[0] == 1 && v[1] == 7 && v[2] == 255);
}

/* Issue 12: 1..INT64_MAX*2 doubled past 2^62 into -2^63 (and then 0, 0, ...). */
static void test_sweep_ranges_stop_at_their_bound_without_overflow(void **state)
{
    int64_t v[MAXV];
    struct kg_err e;
    int n = kg_sweep_parse("1..9223372036854775807*2", v, MAXV, &e);
    assert_int_equal(n, 63);
    for (int i = 0; i < n; i++) assert_true(v[i] == (int64_t)1 << i);
    n = kg_sweep_parse("3..9223372036854775807*3", v, MAXV, &e);
    assert_int_equal(n, 39); /* 3^39 < 2^63 < 3^40 */
    for (int i = 1; i < n; i++) assert_true(v[i] == v[i - 1] * 3 && v[i] > 0);
    n = kg_sweep_parse("9223372036854775800..9223372036854775807+5", v, MAXV, &e);
    assert_int_equal(n, 2);
    assert_true(v[0] == INT64_MAX - 7 && v[1] == INT64_MAX - 2);
    n = kg_sweep_parse("9223372036854775806..9223372036854775807", v, MAXV, &e);
    assert_int_equal(n, 2);
    assert_true(v[1] == INT64_MAX);
    n = kg_sweep_parse("2..9223372036854775807*9223372036854775807", v, MAXV, &e);
    assert_int_equal(n, 1);
    n = kg_sweep_parse("1..9223372036854775807+1", v, MAXV, &e); /* more values than room: capped */
    assert_int_equal(n, MAXV);
    assert_true(v[MAXV - 1] == MAXV);
}

static void test_sweep_rejects_what_does_not_fit_int64(void **state)
{
    int64_t v[MAXV];
    struct kg_err e;
    assert_int_equal(kg_sweep_parse("1..9223372036854775808*2", v, MAXV, &e), -1);
    assert_non_null(strstr(e.msg, "sweep: expected A..B*F"));
    assert_int_equal(kg_sweep_parse("1..100*99999999999999999999", v, MAXV, &e), -1);
    assert_int_equal(kg_sweep_parse("1,99999999999999999999", v, MAXV, &e), -1);
    assert_non_null(strstr(e.msg, "'99999999999999999999' is not a non-negative integer"));
    assert_int_equal(kg_sweep_parse("1,-3", v, MAXV, &e), -1);
    assert_int_equal(kg_sweep_parse("0..4*2", v, MAXV, &e), -1);
    assert_int_equal(kg_sweep_parse("1..4*1", v, MAXV, &e), -1);
    assert_int_equal(kg_sweep_parse("5..4", v, MAXV, &e), -1);
    assert_int_equal(kg_sweep_parse(",", v, MAXV, &e), -1);
}

static struct kg_contract *relu_contract(void)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/kgate-test-inspect-%d.c", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("/*@kgate\nname: r\nop: relu\nentry: relu\nargs: x: in f32[N]; y: out f32[N]; N: long\n"
          "shape: N=1000\n*/\nvoid relu(const float *x, float *y, long N) {}\n",
          f);
    fclose(f);
    struct kg_contract *c;
    struct kg_err e;
    int rc = kg_contract_load(path, &c, &e);
    unlink(path);
    assert_int_equal(rc, 0);
    return c;
}

/* f32 in and out: 3 x 8 B for a run, 2 x 4 + 8 for the input, 72 for the output's float64s. */
static void test_case_bytes_count_every_copy_and_saturate(void **state)
{
    struct kg_contract *c = relu_contract();
    struct kg_case k;
    struct kg_err e;
    int64_t sym[KG_MAX_SYMS] = {1000};
    assert_int_equal(kg_case_init(&k, c, sym, KG_F32, 1, KG_DIST_NORMAL, &e), 0);
    assert_true(kg_inspect_case_bytes(&k) == 112 * 1000);
    assert_int_equal(kg_inspect_fits(&k, 0, &e), 0);
    sym[0] = INT64_MAX;
    assert_int_equal(kg_case_init(&k, c, sym, KG_F32, 1, KG_DIST_NORMAL, &e), 0);
    assert_true(kg_inspect_case_bytes(&k) == UINT64_MAX);
    assert_int_equal(kg_inspect_fits(&k, 0, &e), -1);
    assert_non_null(strstr(e.msg, "N=9223372036854775807 (f32) needs more than 16 EiB for one case"));
    assert_non_null(strstr(e.msg, "over the inspector's budget of"));
    /* the largest N that fits is named: 112 B per element of the budget (which moves a little
     * with the machine's free memory between two reads) */
    const char *le = strstr(e.msg, "N <= ");
    assert_non_null(le);
    double fit = (double)strtoll(le + 5, NULL, 10), per = (double)kg_inspect_budget() / 112;
    assert_true(fit > 1000);
    assert_true(fit > 0.99 * per && fit < 1.01 * per);
    kg_contract_free(c);
}

/* A cause with a home gate (wrong-stream: placement) is owned by that gate when it shows it, even
 * where an earlier gate met the race first (determinism, under load), and an undiagnosed failure
 * that was the earlier gate's symptom follows it there; without the home gate's failure the first
 * gate keeps the cause; a cause with no home keeps the first-gate rule. */
static void test_cause_owned_by_its_home_gate(void **state)
{
    static const struct kg_gate acc = {.id = "accuracy"}, det = {.id = "determinism"}, pla = {.id = "placement"};
    const struct kg_gate *g[3] = {&acc, &det, &pla};
    struct kg_verdict v[3];
    int same[3];
    for (int i = 0; i < 3; i++) kg_verdict_init(&v[i], g[i]);
    v[0].status = KG_FAIL;
    v[0].cause = KG_CAUSE_GATE;
    v[1].status = v[2].status = KG_FAIL;
    v[1].cause = v[2].cause = KG_CAUSE_WRONG_STREAM;
    kg_cause_groups(v, 3, same);
    assert_int_equal(same[2], -1);
    assert_int_equal(same[1], 2);
    assert_int_equal(same[0], 2);

    v[2].status = KG_PASS;
    kg_cause_groups(v, 3, same);
    assert_int_equal(same[1], -1);
    assert_int_equal(same[0], 1);

    v[2].status = KG_FAIL;
    v[1].cause = v[2].cause = KG_CAUSE_NONDETERMINISTIC;
    kg_cause_groups(v, 3, same);
    assert_int_equal(same[1], -1);
    assert_int_equal(same[2], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_ranges_name_their_values),
        cmocka_unit_test(test_cause_owned_by_its_home_gate),
        cmocka_unit_test(test_sweep_ranges_stop_at_their_bound_without_overflow),
        cmocka_unit_test(test_sweep_rejects_what_does_not_fit_int64),
        cmocka_unit_test(test_case_bytes_count_every_copy_and_saturate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
