/* test_oracle.c: the built-in ops against values worked out independently (by hand or to 30
 * digits with mpmath), the three arithmetic modes against each other where their difference
 * is predictable, NaN/Inf rules, parsing and shape-check messages. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"

/* ---- helpers --------------------------------------------------------------------------- */

#define D(...)  ((int64_t[]){__VA_ARGS__})
#define V(...)  ((double[]){__VA_ARGS__})
#define N_OF(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static struct kg_tensor tens(int rank, const int64_t *dims, const double *v)
{
    struct kg_tensor t;
    assert_int_equal(kg_tensor_alloc(&t, KG_F64, rank, dims), 0);
    if (v) memcpy(t.data, v, (size_t)t.numel * sizeof(double));
    return t;
}

static struct kg_opcall parse_ok(const char *text)
{
    struct kg_opcall c;
    struct kg_err e = {{0}};
    if (kg_op_parse(text, &c, &e)) fail_msg("parse '%s': %s", text, e.msg);
    return c;
}

/* Evaluates `text` on in[0..n_in-1] into *out (already allocated with its shape). */
static void eval_ok(const char *text, enum kg_arith a, int n_in, struct kg_tensor *in, struct kg_tensor *out)
{
    struct kg_opcall c = parse_ok(text);
    struct kg_err e = {{0}};
    const struct kg_tensor *ip[KG_OP_MAX_IO];
    for (int i = 0; i < n_in; i++) ip[i] = &in[i];
    struct kg_tensor *op[1] = {out};
    if (kg_op_eval(&c, a, ip, op, &e)) fail_msg("eval '%s': %s", text, e.msg);
}

/* A one-input op whose output has the input's shape, on a vector. */
static void unary(const char *text, enum kg_arith a, const double *x, int64_t n, double *y)
{
    struct kg_tensor in = tens(1, D(n), x), out = tens(1, D(n), NULL);
    eval_ok(text, a, 1, &in, &out);
    memcpy(y, out.data, (size_t)n * sizeof *y);
    kg_tensor_free(&in);
    kg_tensor_free(&out);
}

static double unary1(const char *text, enum kg_arith a, double x)
{
    double y;
    unary(text, a, &x, 1, &y);
    return y;
}

/* A one-input reduction of a vector to a scalar (rank-0 output). */
static double reduce1(const char *text, enum kg_arith a, const double *x, int64_t n)
{
    struct kg_tensor in = tens(1, D(n), x), out = tens(0, NULL, NULL);
    eval_ok(text, a, 1, &in, &out);
    double y = ((double *)out.data)[0];
    kg_tensor_free(&in);
    kg_tensor_free(&out);
    return y;
}

/* |got - want| <= rtol |want| + atol; NaN must match NaN and an infinity itself. */
#define assert_close(got, want, rtol, atol) assert_close_at(got, want, rtol, atol, __FILE__, __LINE__)
#define assert_near(got, want, rtol)        assert_close_at(got, want, rtol, 0, __FILE__, __LINE__)
static void assert_close_at(double got, double want, double rtol, double atol, const char *file, int line)
{
    bool ok;
    if (isnan(want))
        ok = isnan(got);
    else if (isinf(want))
        ok = got == want;
    else
        ok = fabs(got - want) <= rtol * fabs(want) + atol;
    if (!ok) {
        print_error("%s:%d: got %.17g, want %.17g (rtol %g, atol %g)\n", file, line, got, want, rtol, atol);
        _fail(file, line);
    }
}

static bool is_f32(double x)
{
    return isnan(x) || (double)(float)x == x;
}

/* Asserts that the op fails shape checks with a message containing every string given. */
static void assert_check_fails(const char *text, int n_in, const struct kg_shape *in, int n_out,
                               const struct kg_shape *out, const char *const *want)
{
    struct kg_opcall c = parse_ok(text);
    struct kg_err e = {{0}};
    if (kg_op_check(&c, n_in, in, n_out, out, &e) == 0) fail_msg("'%s': check passed", text);
    for (int i = 0; want[i]; i++)
        if (!strstr(e.msg, want[i])) fail_msg("'%s': message lacks '%s': %s", text, want[i], e.msg);
}

static int check(const char *text, int n_in, const struct kg_shape *in, int n_out, const struct kg_shape *out)
{
    struct kg_opcall c = parse_ok(text);
    struct kg_err e = {{0}};
    return kg_op_check(&c, n_in, in, n_out, out, &e);
}

#define S(r, ...)   ((struct kg_shape){.rank = (r), .dims = {__VA_ARGS__}})
#define SHAPES(...) ((struct kg_shape[]){__VA_ARGS__})
#define WANT(...)   ((const char *const[]){__VA_ARGS__, NULL})

/* A deterministic fp32-representable value in [-4, 4). */
static double lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(float)((double)(*s >> 40) / (double)(1ull << 24) * 8.0 - 4.0);
}

/* ---- the table ------------------------------------------------------------------------- */

static void test_table_is_well_formed(void **state)
{
    int n = 0;
    for (; kg_ops[n]; n++) {
        const struct kg_opdef *d = kg_ops[n];
        assert_non_null(d->name);
        assert_non_null(d->eval);
        assert_non_null(d->doc);
        assert_true(strncmp(d->doc, d->name, strlen(d->name)) == 0);
        assert_true(d->n_in >= 1 && d->n_in <= KG_OP_MAX_IO);
        assert_true(d->n_out >= 1 && d->n_out <= KG_OP_MAX_IO);
        assert_ptr_equal(kg_op_find(d->name), d);
        for (int j = 0; j < n; j++) assert_string_not_equal(kg_ops[j]->name, d->name);
    }
    assert_int_equal(n, 36); /* 26 general ops + the 10 gated-linear-recurrence ops (gdn_ops.c) */
    assert_null(kg_op_find("softmx"));
    assert_null(kg_op_find(NULL));
}

static void test_flags_match_the_design(void **state)
{
    static const char *const ew[] = {"relu", "leaky_relu", "gelu",  "gelu_tanh", "silu", "sigmoid",
                                     "tanh", "exp",        "scale", "add",       "mul",  NULL};
    static const char *const rw[] = {"sum",     "mean",        "prod",   "max",       "min",     "argmax",
                                     "softmax", "log_softmax", "cumsum", "layernorm", "rmsnorm", NULL};
    static const char *const pm[] = {"sum", "mean", "prod", "max", "min", NULL};
    for (int i = 0; kg_ops[i]; i++) {
        const struct kg_opdef *d = kg_ops[i];
        bool in_ew = false, in_rw = false, in_pm = false;
        for (int j = 0; ew[j]; j++) in_ew |= strcmp(ew[j], d->name) == 0;
        for (int j = 0; rw[j]; j++) in_rw |= strcmp(rw[j], d->name) == 0;
        for (int j = 0; pm[j]; j++) in_pm |= strcmp(pm[j], d->name) == 0;
        if (in_ew != !!(d->flags & KG_OP_ELEMENTWISE)) fail_msg("%s: ELEMENTWISE", d->name);
        if (in_rw != !!(d->flags & KG_OP_ROWWISE)) fail_msg("%s: ROWWISE", d->name);
        if (in_pm != !!(d->flags & KG_OP_PERMUTABLE)) fail_msg("%s: PERMUTABLE", d->name);
        bool is_argmax = strcmp(d->name, "argmax") == 0;
        if (is_argmax != !!(d->flags & KG_OP_INT_OUT)) fail_msg("%s: INT_OUT", d->name);
    }
}

/* ---- parsing --------------------------------------------------------------------------- */

static void test_parse_accepts_keywords_and_whitespace(void **state)
{
    struct kg_opcall c = parse_ok("relu");
    assert_string_equal(c.def->name, "relu");
    c = parse_ok("relu()");
    assert_string_equal(c.def->name, "relu");
    c = parse_ok("softmax(dim=1)");
    assert_string_equal(c.def->name, "softmax");
    assert_true(c.param[0] == 1);
    c = parse_ok("  softmax ( dim = -1 )  ");
    assert_true(c.param[0] == -1);
    c = parse_ok("leaky_relu");
    assert_true(c.param[0] == 0.01);
    c = parse_ok("leaky_relu(slope=0.2)");
    assert_true(c.param[0] == 0.2);
    c = parse_ok("layernorm(eps=1e-5)");
    assert_true(c.param[0] == 1e-5);
    c = parse_ok("layernorm(eps = 0)");
    assert_true(c.param[0] == 0);
    c = parse_ok("layernorm");
    assert_true(c.param[0] == 1e-5);
    c = parse_ok("rmsnorm");
    assert_true(c.param[0] == 1e-6);
    c = parse_ok("scale(alpha=-2.5e0)");
    assert_true(c.param[0] == -2.5);
    c = parse_ok("causal_attention");
    assert_true(c.param[0] == 0);
    c = parse_ok("causal_attention(scale=0.125)");
    assert_true(c.param[0] == 0.125);
}

static void test_parse_errors_name_the_offender(void **state)
{
    static const struct {
        const char *text;
        const char *want[3];
    } cases[] = {
        {"softmx(dim=1)", {"unknown op 'softmx'", "softmax"}},
        {"softmax(dmi=1)", {"'dmi'", "keywords: dim"}},
        {"softmax", {"missing", "'dim'"}},
        {"softmax()", {"missing", "'dim'"}},
        {"scale", {"missing", "'alpha'"}},
        {"scale(alpha=abc)", {"malformed number", "'abc'"}},
        {"scale(alpha=2x)", {"malformed number", "'2x'"}},
        {"scale(alpha=)", {"malformed number"}},
        {"scale(alpha=nan)", {"finite"}},
        {"scale(alpha 2)", {"'='"}},
        {"softmax(dim=1.5)", {"'1.5'", "integer"}},
        {"softmax(dim=99)", {"99", "out of range"}},
        {"softmax(dim=1) junk", {"'junk'"}},
        {"relu junk", {"'junk'"}},
        {"relu)", {"')'"}},
        {"softmax(dim=1", {"missing ')'"}},
        {"softmax(dim=1 2)", {"'2'"}},
        {"softmax(dim=1,)", {"after ','"}},
        {"softmax(dim=1, dim=2)", {"twice"}},
        {"relu(x=1)", {"no keywords", "'x'"}},
        {"", {"op name"}},
        {"(dim=1)", {"op name"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kg_opcall c;
        struct kg_err e = {{0}};
        if (kg_op_parse(cases[i].text, &c, &e) == 0) fail_msg("'%s' parsed", cases[i].text);
        for (int j = 0; j < 3 && cases[i].want[j]; j++)
            if (!strstr(e.msg, cases[i].want[j]))
                fail_msg("'%s': message lacks \"%s\": %s", cases[i].text, cases[i].want[j], e.msg);
    }
}

/* ---- shape checks ---------------------------------------------------------------------- */

static void test_check_rejects_mismatched_shapes(void **state)
{
    assert_check_fails("add", 2, SHAPES(S(2, 3, 4), S(1, 4)), 1, SHAPES(S(2, 3, 4)),
                       WANT("same shape", "[4]", "[3,4]"));
    assert_check_fails("relu", 1, SHAPES(S(2, 3, 4)), 1, SHAPES(S(2, 4, 3)), WANT("[4,3]"));
    assert_check_fails("relu", 2, SHAPES(S(1, 3), S(1, 3)), 1, SHAPES(S(1, 3)), WANT("takes 1 input", "got 2 inputs"));
    assert_check_fails("matmul", 2, SHAPES(S(2, 16, 48), S(2, 64, 32)), 1, SHAPES(S(2, 16, 32)),
                       WANT("A[M,K], B[K,N] -> C[M,N]", "B[64,32]", "A[16,48]"));
    assert_check_fails("matmul", 2, SHAPES(S(2, 16, 48), S(2, 48, 32)), 1, SHAPES(S(2, 32, 16)),
                       WANT("C[32,16]", "C[16,32]"));
    assert_check_fails("matmul", 2, SHAPES(S(3, 1, 16, 48), S(2, 48, 32)), 1, SHAPES(S(2, 16, 32)), WANT("A[1,16,48]"));
    assert_check_fails("bmm", 2, SHAPES(S(3, 2, 4, 5), S(3, 3, 5, 6)), 1, SHAPES(S(3, 2, 4, 6)),
                       WANT("A[Bt,M,K]", "B[3,5,6]", "batch"));
    assert_check_fails("transpose2d", 1, SHAPES(S(2, 3, 5)), 1, SHAPES(S(2, 3, 5)), WANT("y[N,M]", "y[3,5]"));
    assert_check_fails("causal_attention", 3, SHAPES(S(4, 2, 4, 16, 64), S(4, 2, 4, 16, 32), S(4, 2, 4, 16, 64)), 1,
                       SHAPES(S(4, 2, 4, 16, 64)), WANT("[B,H,T,D]", "k[2,4,16,32]"));
    assert_check_fails("layernorm", 3, SHAPES(S(2, 4, 64), S(1, 32), S(1, 64)), 1, SHAPES(S(2, 4, 64)),
                       WANT("weight[N]", "weight[32]", "x[4,64]"));
    assert_check_fails("layernorm", 3, SHAPES(S(2, 4, 64), S(1, 64), S(2, 1, 64)), 1, SHAPES(S(2, 4, 64)),
                       WANT("bias[1,64]"));
    assert_check_fails("rmsnorm", 2, SHAPES(S(2, 4, 64), S(1, 64)), 1, SHAPES(S(1, 64)), WANT("y[64]"));
    assert_check_fails("layernorm(eps=-1)", 3, SHAPES(S(1, 4), S(1, 4), S(1, 4)), 1, SHAPES(S(1, 4)), WANT("eps"));
    assert_check_fails("sum(dim=2)", 1, SHAPES(S(2, 3, 4)), 1, SHAPES(S(1, 3)), WANT("dim=2", "out of range", "-2..1"));
    assert_check_fails("sum(dim=1)", 1, SHAPES(S(2, 2, 3)), 1, SHAPES(S(1, 3)), WANT("y[2]", "y[2,1]", "got y[3]"));
    assert_check_fails("max(dim=0)", 1, SHAPES(S(2, 0, 3)), 1, SHAPES(S(1, 3)), WANT("empty"));
    assert_check_fails("softmax(dim=-1)", 1, SHAPES(S(2, 2, 3)), 1, SHAPES(S(2, 3, 2)), WANT("[2,3]", "y[3,2]"));
    assert_check_fails("cumsum(dim=0)", 1, SHAPES(S(0)), 1, SHAPES(S(0)), WANT("scalar"));
}

static void test_check_accepts_keepdim_and_negative_dims(void **state)
{
    const struct kg_shape *x = SHAPES(S(2, 2, 3));
    assert_int_equal(check("sum(dim=1)", 1, x, 1, SHAPES(S(1, 2))), 0);
    assert_int_equal(check("sum(dim=1)", 1, x, 1, SHAPES(S(2, 2, 1))), 0);
    assert_int_equal(check("mean(dim=-1)", 1, x, 1, SHAPES(S(1, 2))), 0);
    assert_int_equal(check("max(dim=-2)", 1, x, 1, SHAPES(S(1, 3))), 0);
    assert_int_equal(check("argmax(dim=-2)", 1, x, 1, SHAPES(S(2, 1, 3))), 0);
    assert_int_equal(check("min(dim=0)", 1, x, 1, SHAPES(S(1, 2))), -1);
    assert_int_equal(check("sum(dim=-3)", 1, x, 1, SHAPES(S(1, 2))), -1);
    assert_int_equal(check("sum(dim=0)", 1, SHAPES(S(1, 5)), 1, SHAPES(S(0))), 0);
    assert_int_equal(check("sum(dim=0)", 1, SHAPES(S(1, 5)), 1, SHAPES(S(1, 1))), 0);
    assert_int_equal(check("sum(dim=0)", 1, SHAPES(S(2, 0, 3)), 1, SHAPES(S(1, 3))), 0);
    assert_int_equal(check("softmax(dim=-1)", 1, x, 1, x), 0);
    assert_int_equal(check("cumsum(dim=-2)", 1, x, 1, x), 0);
    assert_int_equal(check("matmul", 2, SHAPES(S(2, 2, 3), S(2, 3, 5)), 1, SHAPES(S(2, 2, 5))), 0);
    assert_int_equal(check("add", 2, SHAPES(S(1, 3), S(1, 3)), 1, SHAPES(S(1, 3))), 0);
}

static void test_reduce_axis(void **state)
{
    struct kg_shape r3 = S(3, 4, 5, 6), r2 = S(2, 4, 5);
    struct kg_opcall c = parse_ok("softmax(dim=-1)");
    assert_int_equal(kg_op_reduce_axis(&c, &r3), 2);
    c = parse_ok("sum(dim=-3)");
    assert_int_equal(kg_op_reduce_axis(&c, &r3), 0);
    c = parse_ok("cumsum(dim=1)");
    assert_int_equal(kg_op_reduce_axis(&c, &r3), 1);
    c = parse_ok("argmax(dim=5)");
    assert_int_equal(kg_op_reduce_axis(&c, &r3), -1);
    c = parse_ok("layernorm");
    assert_int_equal(kg_op_reduce_axis(&c, &r3), 2);
    c = parse_ok("rmsnorm");
    assert_int_equal(kg_op_reduce_axis(&c, &r2), 1);
    c = parse_ok("matmul");
    assert_int_equal(kg_op_reduce_axis(&c, &r2), 1);
    c = parse_ok("bmm");
    assert_int_equal(kg_op_reduce_axis(&c, &r3), 2);
    c = parse_ok("causal_attention");
    struct kg_shape r4 = S(4, 1, 2, 8, 16);
    assert_int_equal(kg_op_reduce_axis(&c, &r4), 2);
    c = parse_ok("relu");
    assert_int_equal(kg_op_reduce_axis(&c, &r2), -1);
    c = parse_ok("transpose2d");
    assert_int_equal(kg_op_reduce_axis(&c, &r2), -1);
}

/* ---- elementwise ----------------------------------------------------------------------- */

static void test_elementwise_known_values(void **state)
{
    const double r = 2e-16;
    assert_true(unary1("relu", KG_EXACT, 2.5) == 2.5);
    assert_true(unary1("relu", KG_EXACT, -3) == 0);
    assert_true(unary1("leaky_relu", KG_EXACT, -3) == -3 * 0.01);
    assert_true(unary1("leaky_relu(slope=0.2)", KG_EXACT, -3) == -3 * 0.2);
    assert_true(unary1("leaky_relu(slope=0.2)", KG_EXACT, 3) == 3);
    assert_near(unary1("gelu", KG_EXACT, 1), 0.8413447460685429, r);
    assert_near(unary1("gelu", KG_EXACT, -1), -0.15865525393145705, 4 * r);
    assert_near(unary1("gelu", KG_EXACT, 3), 2.9959503059051097, r);
    assert_near(unary1("gelu_tanh", KG_EXACT, 1), 0.8411919906082767, r);
    assert_near(unary1("gelu_tanh", KG_EXACT, 0.5), 0.34571400982514392, r);
    assert_near(unary1("silu", KG_EXACT, 1), 0.7310585786300049, r);
    assert_near(unary1("silu", KG_EXACT, -2), -0.23840584404423511, r);
    assert_near(unary1("sigmoid", KG_EXACT, 1), 0.7310585786300049, r);
    assert_true(unary1("sigmoid", KG_EXACT, 0) == 0.5);
    assert_near(unary1("tanh", KG_EXACT, 0.5), 0.46211715726000976, r);
    assert_near(unary1("exp", KG_EXACT, 1), 2.718281828459045, r);
    assert_near(unary1("exp", KG_EXACT, -1), 0.36787944117144233, r);
    assert_true(unary1("scale(alpha=2.5)", KG_EXACT, -4) == -10);

    struct kg_tensor in[2] = {tens(2, D(2, 2), V(1, 2, 3, 4)), tens(2, D(2, 2), V(10, 20, 30, 0.5))};
    struct kg_tensor out = tens(2, D(2, 2), NULL);
    double *y = out.data;
    eval_ok("add", KG_EXACT, 2, in, &out);
    assert_true(y[0] == 11 && y[1] == 22 && y[2] == 33 && y[3] == 4.5);
    eval_ok("mul", KG_W32, 2, in, &out);
    assert_true(y[0] == 10 && y[1] == 40 && y[2] == 90 && y[3] == 2);
    for (int i = 0; i < 2; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&out);
}

static void test_relu_keeps_nan_and_handles_inf(void **state)
{
    for (int a = KG_EXACT; a <= KG_W64; a++) {
        assert_true(isnan(unary1("relu", a, NAN)));
        assert_true(unary1("relu", a, -INFINITY) == 0);
        assert_true(unary1("relu", a, INFINITY) == INFINITY);
        assert_true(unary1("relu", a, -0.0) == 0);
        assert_true(isnan(unary1("leaky_relu", a, NAN)));
        assert_true(unary1("leaky_relu", a, -INFINITY) == -INFINITY);
    }
}

/* PyTorch's formulas give -inf * 0 = NaN at -inf; the oracle follows them (see elementwise.c). */
static void test_activations_follow_the_formula_at_infinity(void **state)
{
    static const char *const ops[] = {"gelu", "gelu_tanh", "silu"};
    for (int a = KG_EXACT; a <= KG_W64; a++) {
        for (int i = 0; i < 3; i++) {
            assert_true(isnan(unary1(ops[i], a, -INFINITY)));
            assert_true(unary1(ops[i], a, INFINITY) == INFINITY);
            assert_true(isnan(unary1(ops[i], a, NAN)));
            assert_true(fabs(unary1(ops[i], a, -200)) < 1e-80);
        }
        assert_true(unary1("sigmoid", a, -INFINITY) == 0);
        assert_true(unary1("sigmoid", a, INFINITY) == 1);
        assert_true(isnan(unary1("exp", a, NAN)));
    }
}

static void test_w32_rounds_every_intermediate(void **state)
{
    assert_true(unary1("exp", KG_W32, 1) == (double)(float)2.718281828459045);
    assert_true(unary1("exp", KG_W32, 1) != unary1("exp", KG_EXACT, 1));
    assert_true(unary1("exp", KG_W64, 1) == unary1("exp", KG_EXACT, 1));
    /* 1 + 2^-30 is not an fp32 value. */
    struct kg_tensor in[2] = {tens(1, D(1), V(1)), tens(1, D(1), V(0x1p-30))};
    struct kg_tensor out = tens(1, D(1), NULL);
    eval_ok("add", KG_W32, 2, in, &out);
    assert_true(((double *)out.data)[0] == 1);
    eval_ok("add", KG_W64, 2, in, &out);
    assert_true(((double *)out.data)[0] == 1 + 0x1p-30);
    for (int i = 0; i < 2; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&out);

    static const char *const ops[] = {"gelu", "gelu_tanh",        "silu",      "sigmoid", "tanh",
                                      "exp",  "scale(alpha=0.1)", "leaky_relu"};
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        int diff = 0;
        for (int k = 0; k < 64; k++) {
            double x = lcg(&seed);
            double w = unary1(ops[i], KG_W32, x), ex = unary1(ops[i], KG_EXACT, x);
            if (!is_f32(w)) fail_msg("%s(%g) in W32 = %.17g, not an fp32 value", ops[i], x, w);
            /* Absolute slack: gelu(-3) cancels in 1 + erf, in fp32 as a kernel would. */
            assert_close(w, ex, 1e-6, 1e-6);
            diff += w != ex;
        }
        if (!diff) fail_msg("%s: W32 never differs from EXACT", ops[i]);
    }
}

/* ---- reductions ------------------------------------------------------------------------ */

static void test_sum_mean_known_values(void **state)
{
    struct kg_tensor x = tens(2, D(2, 3), V(1, 2, 3, 4, 5, 6));
    struct kg_tensor y2 = tens(1, D(2), NULL), y3 = tens(1, D(3), NULL);
    struct kg_tensor yk = tens(2, D(2, 1), NULL);
    double *a = y2.data, *b = y3.data, *k = yk.data;
    for (int m = KG_EXACT; m <= KG_W64; m++) {
        eval_ok("sum(dim=1)", m, 1, &x, &y2);
        assert_true(a[0] == 6 && a[1] == 15);
        eval_ok("sum(dim=-1)", m, 1, &x, &yk);
        assert_true(k[0] == 6 && k[1] == 15);
        eval_ok("sum(dim=0)", m, 1, &x, &y3);
        assert_true(b[0] == 5 && b[1] == 7 && b[2] == 9);
        eval_ok("mean(dim=-1)", m, 1, &x, &y2);
        assert_true(a[0] == 2 && a[1] == 5);
        eval_ok("mean(dim=-2)", m, 1, &x, &y3);
        assert_true(b[0] == 2.5 && b[1] == 3.5 && b[2] == 4.5);
    }
    kg_tensor_free(&x);
    kg_tensor_free(&y2);
    kg_tensor_free(&y3);
    kg_tensor_free(&yk);
}

/* fp32 has spacing 8 at 1e8, so 1e8 + 1 rounds back to 1e8: the sequential fp32 sum of
 * [1e8, 1, -1e8, 1] is 1, the exact sum 2. At 1e16 double has spacing 2 and the same
 * happens to plain double (1e16 + 1 is a tie, rounded to the even 1e16). */
static void test_sum_w32_is_sequential_fp32(void **state)
{
    const double *x = V(1e8, 1, -1e8, 1);
    assert_true(reduce1("sum(dim=0)", KG_W32, x, 4) == 1);
    assert_true(reduce1("sum(dim=0)", KG_EXACT, x, 4) == 2);
    assert_true(reduce1("sum(dim=0)", KG_W64, x, 4) == 2);
    assert_true(reduce1("mean(dim=0)", KG_W32, x, 4) == 0.25);
    assert_true(reduce1("mean(dim=0)", KG_EXACT, x, 4) == 0.5);
    assert_true(reduce1("mean(dim=0)", KG_W32, V(1, 1, 0), 3) == (double)(2.0f / 3.0f));
    assert_true(reduce1("mean(dim=0)", KG_EXACT, V(1, 1, 0), 3) == 2.0 / 3.0);
    const double *z = V(1e16, 1, -1e16, 1);
    assert_true(reduce1("sum(dim=0)", KG_W64, z, 4) == 1);
    assert_true(reduce1("sum(dim=0)", KG_EXACT, z, 4) == 2);
}

static void test_sum_of_opposite_infinities_is_nan(void **state)
{
    for (int a = KG_EXACT; a <= KG_W64; a++) {
        assert_true(isnan(reduce1("sum(dim=0)", a, V(INFINITY, -INFINITY, 1), 3)));
        assert_true(isnan(reduce1("sum(dim=0)", a, V(1, INFINITY, 2, -INFINITY), 4)));
        assert_true(reduce1("sum(dim=0)", a, V(INFINITY, 1, 2), 3) == INFINITY);
        assert_true(reduce1("sum(dim=0)", a, V(1, -INFINITY), 2) == -INFINITY);
        assert_true(isnan(reduce1("sum(dim=0)", a, V(1, NAN, 2), 3)));
        assert_true(isnan(reduce1("mean(dim=0)", a, V(1, NAN), 2)));
    }
}

static void test_max_min_with_nan_are_nan(void **state)
{
    for (int a = KG_EXACT; a <= KG_W64; a++) {
        assert_true(isnan(reduce1("max(dim=0)", a, V(1, NAN, 3), 3)));
        assert_true(isnan(reduce1("max(dim=0)", a, V(NAN, 1, 3), 3)));
        assert_true(isnan(reduce1("max(dim=0)", a, V(1, 3, NAN), 3)));
        assert_true(isnan(reduce1("min(dim=0)", a, V(1, NAN, -3), 3)));
        assert_true(isnan(reduce1("min(dim=0)", a, V(NAN, 1), 2)));
        assert_true(reduce1("max(dim=0)", a, V(1, 5, 3), 3) == 5);
        assert_true(reduce1("min(dim=0)", a, V(1, 5, -3), 3) == -3);
        assert_true(reduce1("max(dim=0)", a, V(-INFINITY, -INFINITY), 2) == -INFINITY);
        assert_true(reduce1("max(dim=0)", a, V(2, INFINITY), 2) == INFINITY);
        assert_true(reduce1("min(dim=0)", a, V(2, -INFINITY), 2) == -INFINITY);
    }
}

static void test_argmax_first_max_or_first_nan(void **state)
{
    for (int a = KG_EXACT; a <= KG_W64; a++) {
        assert_true(reduce1("argmax(dim=0)", a, V(1, 3, 3, 2), 4) == 1);
        assert_true(reduce1("argmax(dim=0)", a, V(1, NAN, 5, NAN), 4) == 1);
        assert_true(reduce1("argmax(dim=0)", a, V(9, 3, 5, NAN), 4) == 3);
        assert_true(reduce1("argmax(dim=0)", a, V(NAN), 1) == 0);
        assert_true(reduce1("argmax(dim=0)", a, V(-INFINITY, -INFINITY), 2) == 0);
        assert_true(reduce1("argmax(dim=0)", a, V(-1, -INFINITY, INFINITY), 3) == 2);
    }
    /* Along dim 0 of [[1,9],[5,9],[5,2]]: column 0 has its max twice, column 1 too. */
    struct kg_tensor x = tens(2, D(3, 2), V(1, 9, 5, 9, 5, 2)), y = tens(1, D(2), NULL);
    eval_ok("argmax(dim=0)", KG_EXACT, 1, &x, &y);
    assert_true(((double *)y.data)[0] == 1 && ((double *)y.data)[1] == 0);
    kg_tensor_free(&x);
    kg_tensor_free(&y);
}

static void test_softmax_known_values(void **state)
{
    double y[3];
    unary("softmax(dim=0)", KG_EXACT, V(1, 2, 3), 3, y);
    assert_near(y[0], 0.090030573170380460, 2e-16);
    assert_near(y[1], 0.24472847105479765, 2e-16);
    assert_near(y[2], 0.66524095577482189, 2e-16);
    unary("log_softmax(dim=-1)", KG_EXACT, V(1, 2, 3), 3, y);
    assert_near(y[0], -2.4076059644443803, 4e-16);
    assert_near(y[1], -1.4076059644443803, 4e-16);
    assert_near(y[2], -0.40760596444438030, 4e-16);
    /* Shifting by a large constant changes nothing: the row max is subtracted. */
    unary("softmax(dim=0)", KG_W32, V(1001, 1002, 1003), 3, y);
    assert_near(y[0], 0.090030573170380460, 1e-6);
    assert_near(y[2], 0.66524095577482189, 1e-6);
    unary("log_softmax(dim=0)", KG_EXACT, V(-1000, -1000), 2, y);
    assert_near(y[0], -0.69314718055994531, 2e-16);

    /* Along dim 0 of a [3,2]: each column is a softmax over three rows. */
    struct kg_tensor x = tens(2, D(3, 2), V(1, 0, 2, 0, 3, 0)), z = tens(2, D(3, 2), NULL);
    double *o = z.data;
    eval_ok("softmax(dim=0)", KG_EXACT, 1, &x, &z);
    assert_near(o[0], 0.090030573170380460, 2e-16);
    assert_near(o[4], 0.66524095577482189, 2e-16);
    assert_near(o[1], 1.0 / 3, 2e-16);
    assert_near(o[5], 1.0 / 3, 2e-16);
    kg_tensor_free(&x);
    kg_tensor_free(&z);
}

static void test_softmax_nonfinite_rows(void **state)
{
    double y[3];
    for (int a = KG_EXACT; a <= KG_W64; a++) {
        static const char *const ops[] = {"softmax(dim=0)", "log_softmax(dim=0)"};
        for (int i = 0; i < 2; i++) {
            unary(ops[i], a, V(1, NAN, 3), 3, y);
            assert_true(isnan(y[0]) && isnan(y[1]) && isnan(y[2]));
            unary(ops[i], a, V(0, INFINITY, 1), 3, y);
            assert_true(isnan(y[0]) && isnan(y[1]) && isnan(y[2]));
            unary(ops[i], a, V(-INFINITY, -INFINITY, -INFINITY), 3, y);
            assert_true(isnan(y[0]) && isnan(y[1]) && isnan(y[2]));
        }
        unary("softmax(dim=0)", a, V(-INFINITY, 0, -INFINITY), 3, y);
        assert_true(y[0] == 0 && y[1] == 1 && y[2] == 0);
        unary("log_softmax(dim=0)", a, V(-INFINITY, 0, -INFINITY), 3, y);
        assert_true(y[0] == -INFINITY && y[1] == 0 && y[2] == -INFINITY);
    }
}

/* Rows of 8: every W32 step costs at most ~1 ulp and the sequential sum 7, well under 1e-6. */
static void test_softmax_w32_close_to_exact(void **state)
{
    enum { R = 64, C = 8 };
    uint64_t seed = 7;
    struct kg_tensor x = tens(2, D(R, C), NULL);
    struct kg_tensor yw = tens(2, D(R, C), NULL), ye = tens(2, D(R, C), NULL);
    for (int i = 0; i < R * C; i++) ((double *)x.data)[i] = lcg(&seed);
    static const char *const ops[] = {"softmax(dim=1)", "log_softmax(dim=-1)"};
    for (int k = 0; k < 2; k++) {
        eval_ok(ops[k], KG_W32, 1, &x, &yw);
        eval_ok(ops[k], KG_EXACT, 1, &x, &ye);
        int diff = 0;
        for (int i = 0; i < R * C; i++) {
            double w = ((double *)yw.data)[i], e = ((double *)ye.data)[i];
            assert_true(is_f32(w));
            assert_near(w, e, 1e-6);
            diff += w != e;
        }
        assert_true(diff > R * C / 2);
    }
    kg_tensor_free(&x);
    kg_tensor_free(&yw);
    kg_tensor_free(&ye);
}

/* prod in fp32 overflows where fp64 does not: the working-precision result the non-finite
 * calibration accepts. */
static void test_prod(void **state)
{
    double y[1];
    y[0] = reduce1("prod(dim=0)", KG_EXACT, V(2, 3, 4), 3);
    assert_true(y[0] == 24);
    y[0] = reduce1("prod(dim=0)", KG_W32, V(1e30, 1e30, 1e-30), 3);
    assert_true(y[0] == INFINITY);
    y[0] = reduce1("prod(dim=0)", KG_EXACT, V(1e30, 1e30, 1e-30), 3);
    assert_true(y[0] > 0.99e30 && y[0] < 1.01e30);
}

/* The half-precision accumulator modes round the running sum: 2048 + 1 is 2048 in fp16 (11
 * bits), 256 + 1 is 256 in bf16 (8 bits); the fp32 working mode keeps both. */
static void test_low_precision_accumulators(void **state)
{
    double y[1];
    y[0] = reduce1("sum(dim=0)", KG_WACC16, V(2048, 1, 1, 1), 4);
    assert_true(y[0] == 2048);
    y[0] = reduce1("sum(dim=0)", KG_WACCBF16, V(256, 1, 1, 1), 4);
    assert_true(y[0] == 256);
    y[0] = reduce1("sum(dim=0)", KG_W32, V(2048, 1, 1, 1), 4);
    assert_true(y[0] == 2051);
    y[0] = reduce1("sum(dim=0)", KG_WACC16, V(1, 2, 3), 3);
    assert_true(y[0] == 6);
    /* ops without sums through kg_acc refuse the modes instead of silently computing fp32 */
    const struct kg_opdef *d = kg_op_find("relu");
    assert_non_null(d);
    assert_false(d->flags & KG_OP_LOWACC);
    assert_true(kg_op_find("matmul")->flags & KG_OP_LOWACC);
}

static void test_cumsum(void **state)
{
    double y[4];
    unary("cumsum(dim=0)", KG_EXACT, V(1, 2, 3, 4), 4, y);
    assert_true(y[0] == 1 && y[1] == 3 && y[2] == 6 && y[3] == 10);
    unary("cumsum(dim=0)", KG_W32, V(1e8, 1, 1, 1), 4, y);
    assert_true(y[0] == 1e8 && y[1] == 1e8 && y[2] == 1e8 && y[3] == 1e8);
    unary("cumsum(dim=0)", KG_EXACT, V(1e8, 1, 1, 1), 4, y);
    assert_true(y[1] == 1e8 + 1 && y[3] == 1e8 + 3);
    /* Each prefix is compensated in EXACT: 1e16 + 1 + 1 - 1e16 is 2; plain double loses both
     * ones (1e16 + 1 is a tie, rounded to the even 1e16). */
    unary("cumsum(dim=0)", KG_EXACT, V(1e16, 1, 1, -1e16), 4, y);
    assert_true(y[3] == 2);
    unary("cumsum(dim=0)", KG_W64, V(1e16, 1, 1, -1e16), 4, y);
    assert_true(y[3] == 0);
    unary("cumsum(dim=0)", KG_EXACT, V(1, INFINITY, -INFINITY, 1), 4, y);
    assert_true(y[0] == 1 && y[1] == INFINITY && isnan(y[2]) && isnan(y[3]));

    struct kg_tensor x = tens(2, D(3, 2), V(1, 10, 2, 20, 3, 30)), z = tens(2, D(3, 2), NULL);
    double *o = z.data;
    eval_ok("cumsum(dim=0)", KG_W64, 1, &x, &z);
    assert_true(o[0] == 1 && o[1] == 10 && o[2] == 3 && o[3] == 30 && o[4] == 6 && o[5] == 60);
    eval_ok("cumsum(dim=-1)", KG_W64, 1, &x, &z);
    assert_true(o[0] == 1 && o[1] == 11 && o[2] == 2 && o[3] == 22 && o[4] == 3 && o[5] == 33);
    kg_tensor_free(&x);
    kg_tensor_free(&z);
}

/* Every op along the middle dim of [3,5,37] (37 columns: two full gather blocks and a
 * partial one) equals the op applied to each strided row copied out by hand. */
static void test_middle_dim_matches_rows_copied_by_hand(void **state)
{
    enum { A = 3, N = 5, I = 37 };
    static const char *const ops[] = {"sum(dim=1)",    "mean(dim=-2)",   "max(dim=1)",    "min(dim=1)",
                                      "argmax(dim=1)", "softmax(dim=1)", "cumsum(dim=1)", "log_softmax(dim=-2)"};
    uint64_t seed = 3;
    struct kg_tensor x = tens(3, D(A, N, I), NULL);
    double *xd = x.data;
    for (int i = 0; i < A * N * I; i++) xd[i] = lcg(&seed);
    xd[(1 * N + 2) * I + 20] = xd[(1 * N + 4) * I + 20] = 99; /* a tie for argmax */
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        bool scan = ops[k][0] == 'c' || strstr(ops[k], "softmax");
        struct kg_tensor y = scan ? tens(3, D(A, N, I), NULL) : tens(2, D(A, I), NULL);
        for (int m = KG_EXACT; m <= KG_W64; m++) {
            eval_ok(ops[k], m, 1, &x, &y);
            for (int a = 0; a < A; a++)
                for (int i = 0; i < I; i++) {
                    double row[N], want[N];
                    for (int n = 0; n < N; n++) row[n] = xd[(a * N + n) * I + i];
                    char op1[64];
                    snprintf(op1, sizeof op1, "%.*s(dim=0)", (int)strcspn(ops[k], "("), ops[k]);
                    if (scan)
                        unary(op1, m, row, N, want);
                    else
                        want[0] = reduce1(op1, m, row, N);
                    for (int n = 0; n < (scan ? N : 1); n++) {
                        double got = ((double *)y.data)[(a * (scan ? N : 1) + n) * I + i];
                        if (!(got == want[n]))
                            fail_msg("%s mode %d at [%d,%d,%d]: %.17g vs %.17g", ops[k], m, a, n, i, got, want[n]);
                    }
                }
        }
        kg_tensor_free(&y);
    }
    kg_tensor_free(&x);
}

static void test_empty_dims(void **state)
{
    struct kg_tensor x = tens(2, D(2, 0), NULL), y = tens(1, D(2), NULL);
    double *o = y.data;
    eval_ok("sum(dim=1)", KG_EXACT, 1, &x, &y);
    assert_true(o[0] == 0 && o[1] == 0);
    eval_ok("mean(dim=1)", KG_W32, 1, &x, &y);
    assert_true(isnan(o[0]) && isnan(o[1]));
    kg_tensor_free(&x);
    kg_tensor_free(&y);
}

/* ---- norms ----------------------------------------------------------------------------- */

static void test_layernorm_known_values(void **state)
{
    struct kg_tensor in[3] = {tens(2, D(2, 4), V(1, 2, 3, 4, 2, 2, 2, 2)), tens(1, D(4), V(1, 2, 1, 1)),
                              tens(1, D(4), V(0, 0, 1, 0))};
    struct kg_tensor y = tens(2, D(2, 4), NULL);
    double *o = y.data;
    eval_ok("layernorm(eps=0)", KG_EXACT, 3, in, &y);
    assert_near(o[0], -1.3416407864998738, 2e-16);
    assert_near(o[1], -0.89442719099991588, 2e-16);
    assert_near(o[2], 1.4472135954999579, 2e-16);
    assert_near(o[3], 1.3416407864998738, 2e-16);
    /* A constant row has zero variance: eps keeps it finite and y = bias. */
    eval_ok("layernorm", KG_W32, 3, in, &y);
    assert_true(o[4] == 0 && o[5] == 0 && o[6] == 1 && o[7] == 0);
    assert_near(o[0], -1.3416407864998738 / sqrt(1 + 1e-5 / 1.25), 1e-6);
    eval_ok("layernorm(eps=0)", KG_EXACT, 3, in, &y);
    assert_true(isnan(o[4]));
    for (int i = 0; i < 3; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&y);
}

/* Around 1e4 the one-pass E[x^2]-E[x]^2 in fp32 is noise (spacing 8 at 1e8 against a
 * variance of 1.25); the two-pass variance is exact there, so W32 tracks EXACT. */
static void test_layernorm_w32_uses_two_pass_variance(void **state)
{
    struct kg_tensor in[3] = {tens(1, D(4), V(10001, 10002, 10003, 10004)), tens(1, D(4), V(1, 1, 1, 1)),
                              tens(1, D(4), V(0, 0, 0, 0))};
    struct kg_tensor yw = tens(1, D(4), NULL), ye = tens(1, D(4), NULL);
    eval_ok("layernorm(eps=0)", KG_W32, 3, in, &yw);
    eval_ok("layernorm(eps=0)", KG_EXACT, 3, in, &ye);
    for (int i = 0; i < 4; i++) assert_near(((double *)yw.data)[i], ((double *)ye.data)[i], 1e-6);
    assert_near(((double *)ye.data)[0], -1.3416407864998738, 1e-15);
    for (int i = 0; i < 3; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&yw);
    kg_tensor_free(&ye);
}

static void test_rmsnorm_known_values(void **state)
{
    struct kg_tensor in[2] = {tens(2, D(1, 4), V(1, 2, 3, 4)), tens(1, D(4), V(1, 1, 2, 1))};
    struct kg_tensor y = tens(2, D(1, 4), NULL);
    double *o = y.data;
    eval_ok("rmsnorm(eps=0)", KG_EXACT, 2, in, &y);
    assert_near(o[0], 0.36514837167011074, 2e-16);
    assert_near(o[1], 0.73029674334022148, 2e-16);
    assert_near(o[2], 2.1908902300206645, 2e-16);
    assert_near(o[3], 1.4605934866804430, 2e-16);
    eval_ok("rmsnorm", KG_W32, 2, in, &y);
    assert_near(o[2], 2.1908902300206645, 1e-6);
    assert_true(is_f32(o[2]));
    for (int i = 0; i < 2; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&y);
}

/* ---- linalg ---------------------------------------------------------------------------- */

static void test_matmul_known_values(void **state)
{
    struct kg_tensor in[2] = {tens(2, D(2, 3), V(1, 2, 3, 4, 5, 6)), tens(2, D(3, 2), V(7, 8, 9, 10, 11, 12))};
    struct kg_tensor c = tens(2, D(2, 2), NULL);
    double *o = c.data;
    for (int a = KG_EXACT; a <= KG_W64; a++) {
        eval_ok("matmul", a, 2, in, &c);
        assert_true(o[0] == 58 && o[1] == 64 && o[2] == 139 && o[3] == 154);
    }
    for (int i = 0; i < 2; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&c);
}

/* Each output sums over k in order, in fp32 for W32: [1e8, 1, -1e8, 1] . 1 is 1, not 2. */
static void test_matmul_w32_sums_k_in_order(void **state)
{
    struct kg_tensor in[2] = {tens(2, D(1, 4), V(1e8, 1, -1e8, 1)),
                              tens(2, D(4, 3), V(1, 1, 2, 1, 1, 2, 1, 1, 2, 1, 0, 2))};
    struct kg_tensor c = tens(2, D(1, 3), NULL);
    double *o = c.data;
    eval_ok("matmul", KG_W32, 2, in, &c);
    assert_true(o[0] == 1 && o[1] == 0 && o[2] == 2);
    eval_ok("matmul", KG_EXACT, 2, in, &c);
    assert_true(o[0] == 2 && o[1] == 1 && o[2] == 4);
    for (int i = 0; i < 2; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&c);
}

/* Small integers: every mode is exact, so all three equal a naive triple loop. bmm equals
 * matmul on each batch slice. */
static void test_matmul_and_bmm_match_naive_loops(void **state)
{
    enum { B = 3, M = 7, K = 13, N = 5 };
    uint64_t seed = 11;
    struct kg_tensor in[2] = {tens(3, D(B, M, K), NULL), tens(3, D(B, K, N), NULL)};
    struct kg_tensor c = tens(3, D(B, M, N), NULL);
    double *a = in[0].data, *b = in[1].data, *o = c.data;
    for (int i = 0; i < B * M * K; i++) a[i] = floor(lcg(&seed) * 4);
    for (int i = 0; i < B * K * N; i++) b[i] = floor(lcg(&seed) * 4);
    for (int m = KG_EXACT; m <= KG_W64; m++) {
        eval_ok("bmm", m, 2, in, &c);
        for (int t = 0; t < B; t++)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double s = 0;
                    for (int k = 0; k < K; k++) s += a[(t * M + i) * K + k] * b[(t * K + k) * N + j];
                    assert_true(o[(t * M + i) * N + j] == s);
                }
    }
    struct kg_tensor a1 = tens(2, D(M, K), a + M * K), b1 = tens(2, D(K, N), b + K * N);
    struct kg_tensor c1 = tens(2, D(M, N), NULL);
    struct kg_tensor pair[2] = {a1, b1};
    eval_ok("matmul", KG_W32, 2, pair, &c1);
    assert_memory_equal(c1.data, o + M * N, M * N * sizeof(double));
    kg_tensor_free(&a1);
    kg_tensor_free(&b1);
    kg_tensor_free(&c1);
    for (int i = 0; i < 2; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&c);
}

static void test_transpose2d(void **state)
{
    enum { M = 37, N = 3 };
    struct kg_tensor x = tens(2, D(M, N), NULL), y = tens(2, D(N, M), NULL);
    for (int i = 0; i < M * N; i++) ((double *)x.data)[i] = i;
    eval_ok("transpose2d", KG_W32, 1, &x, &y);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) assert_true(((double *)y.data)[j * M + i] == i * N + j);
    kg_tensor_free(&x);
    kg_tensor_free(&y);
}

/* T=2, D=2, q=[[1,0],[0,1]], k=[[1,0],[1,1]], v=[[1,2],[3,4]]. Row 0 sees only key 0: o=v0.
 * Row 1 scores [0,1]*scale; with scale 1 the weights are [1/(1+e), e/(1+e)], so
 * o1 = v0 + 2e/(1+e) = [2.46211715726000976, 3.46211715726000976]; with the default
 * scale 1/sqrt(2), o1 = [2.33952309865331385, 3.33952309865331385]. */
static void test_causal_attention_by_hand(void **state)
{
    struct kg_tensor in[3] = {tens(4, D(1, 1, 2, 2), V(1, 0, 0, 1)), tens(4, D(1, 1, 2, 2), V(1, 0, 1, 1)),
                              tens(4, D(1, 1, 2, 2), V(1, 2, 3, 4))};
    struct kg_tensor o = tens(4, D(1, 1, 2, 2), NULL);
    double *y = o.data;
    eval_ok("causal_attention(scale=1)", KG_EXACT, 3, in, &o);
    assert_true(y[0] == 1 && y[1] == 2);
    assert_near(y[2], 2.4621171572600098, 4e-16);
    assert_near(y[3], 3.4621171572600098, 4e-16);
    eval_ok("causal_attention", KG_EXACT, 3, in, &o);
    assert_near(y[2], 2.3395230986533139, 4e-16);
    assert_near(y[3], 3.3395230986533139, 4e-16);
    eval_ok("causal_attention", KG_W32, 3, in, &o);
    assert_near(y[2], 2.3395230986533139, 1e-6);
    assert_true(is_f32(y[2]) && is_f32(y[3]));
    eval_ok("causal_attention", KG_W64, 3, in, &o);
    assert_near(y[3], 3.3395230986533139, 4e-16);
    for (int i = 0; i < 3; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&o);
}

/* Changing key/value t changes no output row before t; heads are independent. */
static void test_causal_attention_is_causal_per_head(void **state)
{
    enum { B = 2, H = 2, T = 9, Dd = 4, NE = B * H * T * Dd };
    uint64_t seed = 5;
    struct kg_tensor in[3], o1 = tens(4, D(B, H, T, Dd), NULL), o2 = tens(4, D(B, H, T, Dd), NULL);
    for (int i = 0; i < 3; i++) {
        in[i] = tens(4, D(B, H, T, Dd), NULL);
        for (int k = 0; k < NE; k++) ((double *)in[i].data)[k] = lcg(&seed);
    }
    eval_ok("causal_attention", KG_EXACT, 3, in, &o1);
    /* Perturb position 6 of head (1,0) in k and v. */
    int64_t head = (1 * H + 0) * T * Dd;
    for (int d = 0; d < Dd; d++) {
        ((double *)in[1].data)[head + 6 * Dd + d] += 1;
        ((double *)in[2].data)[head + 6 * Dd + d] -= 1;
    }
    eval_ok("causal_attention", KG_EXACT, 3, in, &o2);
    const double *y1 = o1.data, *y2 = o2.data;
    for (int k = 0; k < NE; k++) {
        bool may_change = k >= head + 6 * Dd && k < head + T * Dd;
        if (!may_change && y1[k] != y2[k]) fail_msg("element %d changed", k);
        if (may_change && y1[k] == y2[k]) fail_msg("element %d did not change", k);
    }
    /* And W32 stays within fp32 error of EXACT. */
    eval_ok("causal_attention", KG_W32, 3, in, &o1);
    for (int k = 0; k < NE; k++) assert_close(y1[k], y2[k], 1e-5, 1e-5);
    for (int i = 0; i < 3; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&o1);
    kg_tensor_free(&o2);
}

static void test_causal_attention_nan_spreads_to_later_rows_only(void **state)
{
    struct kg_tensor in[3] = {tens(4, D(1, 1, 3, 1), V(1, 1, 1)), tens(4, D(1, 1, 3, 1), V(1, NAN, 1)),
                              tens(4, D(1, 1, 3, 1), V(5, 6, 7))};
    struct kg_tensor o = tens(4, D(1, 1, 3, 1), NULL);
    double *y = o.data;
    eval_ok("causal_attention", KG_W32, 3, in, &o);
    assert_true(y[0] == 5 && isnan(y[1]) && isnan(y[2]));
    for (int i = 0; i < 3; i++) kg_tensor_free(&in[i]);
    kg_tensor_free(&o);
}

/* ---- eval guards ----------------------------------------------------------------------- */

static void test_eval_rejects_bad_tensors(void **state)
{
    struct kg_opcall c = parse_ok("matmul");
    struct kg_err e = {{0}};
    struct kg_tensor a = tens(2, D(2, 3), NULL), b = tens(2, D(4, 2), NULL);
    struct kg_tensor o = tens(2, D(2, 2), NULL);
    const struct kg_tensor *ip[2] = {&a, &b};
    struct kg_tensor *op[1] = {&o};
    assert_int_equal(kg_op_eval(&c, KG_EXACT, ip, op, &e), -1);
    assert_non_null(strstr(e.msg, "B[4,2]"));
    kg_tensor_free(&b);
    struct kg_tensor bf;
    assert_int_equal(kg_tensor_alloc(&bf, KG_F32, 2, D(3, 2)), 0);
    ip[1] = &bf;
    assert_int_equal(kg_op_eval(&c, KG_EXACT, ip, op, &e), -1);
    assert_non_null(strstr(e.msg, "f32"));
    ip[1] = NULL;
    assert_int_equal(kg_op_eval(&c, KG_EXACT, ip, op, &e), -1);
    assert_non_null(strstr(e.msg, "missing"));
    kg_tensor_free(&bf);
    kg_tensor_free(&a);
    kg_tensor_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_well_formed),
        cmocka_unit_test(test_flags_match_the_design),
        cmocka_unit_test(test_parse_accepts_keywords_and_whitespace),
        cmocka_unit_test(test_parse_errors_name_the_offender),
        cmocka_unit_test(test_check_rejects_mismatched_shapes),
        cmocka_unit_test(test_check_accepts_keepdim_and_negative_dims),
        cmocka_unit_test(test_reduce_axis),
        cmocka_unit_test(test_elementwise_known_values),
        cmocka_unit_test(test_relu_keeps_nan_and_handles_inf),
        cmocka_unit_test(test_activations_follow_the_formula_at_infinity),
        cmocka_unit_test(test_w32_rounds_every_intermediate),
        cmocka_unit_test(test_sum_mean_known_values),
        cmocka_unit_test(test_sum_w32_is_sequential_fp32),
        cmocka_unit_test(test_sum_of_opposite_infinities_is_nan),
        cmocka_unit_test(test_max_min_with_nan_are_nan),
        cmocka_unit_test(test_argmax_first_max_or_first_nan),
        cmocka_unit_test(test_softmax_known_values),
        cmocka_unit_test(test_softmax_nonfinite_rows),
        cmocka_unit_test(test_softmax_w32_close_to_exact),
        cmocka_unit_test(test_cumsum),
        cmocka_unit_test(test_prod),
        cmocka_unit_test(test_low_precision_accumulators),
        cmocka_unit_test(test_middle_dim_matches_rows_copied_by_hand),
        cmocka_unit_test(test_empty_dims),
        cmocka_unit_test(test_layernorm_known_values),
        cmocka_unit_test(test_layernorm_w32_uses_two_pass_variance),
        cmocka_unit_test(test_rmsnorm_known_values),
        cmocka_unit_test(test_matmul_known_values),
        cmocka_unit_test(test_matmul_w32_sums_k_in_order),
        cmocka_unit_test(test_matmul_and_bmm_match_naive_loops),
        cmocka_unit_test(test_transpose2d),
        cmocka_unit_test(test_causal_attention_by_hand),
        cmocka_unit_test(test_causal_attention_is_causal_per_head),
        cmocka_unit_test(test_causal_attention_nan_spreads_to_later_rows_only),
        cmocka_unit_test(test_eval_rejects_bad_tensors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
