/* test_inspect.c: the engine side of the inspector that needs no session: a sweep's list and
 * ranges parse to the values they name and stop at their bound, however close to INT64_MAX
 * (no signed overflow: `make check` under --enable-asan runs this with UBSan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/inspect.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_ranges_name_their_values),
        cmocka_unit_test(test_sweep_ranges_stop_at_their_bound_without_overflow),
        cmocka_unit_test(test_sweep_rejects_what_does_not_fit_int64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
