/* test_contract.c: the contract parser and the expression evaluator: the documented syntax is
 * accepted exactly, every malformed header is rejected with FILE:LINE and what was expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract/case.h"
#include "contract/contract.h"
#include "base/expr.h"

static char path[256];

/* Writes len bytes of text to a temporary file with the given extension and loads it. */
static int load_n(const char *ext, const char *text, size_t len, struct kg_contract **c, struct kg_err *e)
{
    snprintf(path, sizeof path, "/tmp/kgate-test-contract-%d%s", (int)getpid(), ext);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    int rc = kg_contract_load(path, c, e);
    unlink(path);
    return rc;
}

static int load(const char *ext, const char *text, struct kg_contract **c, struct kg_err *e)
{
    return load_n(ext, text, strlen(text), c, e);
}

static const char *softmax = "/*@kgate\n"
                             "name:    softmax_rows\n"
                             "op:      softmax(dim=1)\n"
                             "entry:   softmax_rows\n"
                             "args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int\n"
                             "launch:  grid=M block=256 smem=0\n"
                             "shape:   M=512 N=1000\n"
                             "sweep:   M=1,3,64 N=1,7,255,256,257,4097\n"
                             "*/\n"
                             "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int M, int N) {}\n";

static void test_the_issue_example_parses(void **state)
{
    struct kg_contract *c;
    struct kg_err e;
    assert_int_equal(load(".cu", softmax, &c, &e), 0);
    assert_string_equal(c->name, "softmax_rows");
    assert_string_equal(c->entry, "softmax_rows");
    assert_int_equal(c->lang, KG_LANG_CUDA);
    assert_int_equal(c->nargs, 4);
    assert_int_equal(c->args[0].kind, KG_ARG_TENSOR);
    assert_int_equal(c->args[0].io, KG_IN);
    assert_int_equal(c->args[1].io, KG_OUT);
    assert_int_equal(c->args[0].dtype, KG_F32);
    assert_int_equal(c->args[2].kind, KG_ARG_INT);
    assert_int_equal(c->nsyms, 2);
    assert_int_equal(c->nominal[kg_contract_sym(c, "N")], 1000);
    assert_int_equal(c->nsweep[kg_contract_sym(c, "N")], 6);
    assert_int_equal(c->sweep[kg_contract_sym(c, "N")][5], 4097);
    assert_true(c->has_op);
    assert_true(c->tol_k == 2);
    assert_true(c->deterministic);
    struct kg_case k;
    assert_int_equal(kg_case_init(&k, c, NULL, KG_F32, 1, KG_DIST_NORMAL, &e), 0);
    assert_int_equal(k.grid[0], 512);
    assert_int_equal(k.block[0], 256);
    assert_int_equal(k.numel[0], 512000);
    kg_contract_free(c);
}

static void test_optional_keys_tuples_and_continuations(void **state)
{
    const char *text =
        "// a licence line first\n"
        "/*@kgate\n"
        "name: mm\n"
        "op: matmul\n"
        "entry: mm\n"
        "args: A: in T[M,K]; B: in T[K,N];\n"
        "      C: out T[M,N]; M: int; N: int; K: int; alpha: float = 1e-5\n"
        "launch: grid=(cdiv(N, 16), cdiv(M,16)) block=(16,16) smem=2*16*16*4\n"
        "shape: M=64 N=32 K=48\n"
        "tolerance: k=4\n"
        "deterministic: no\n"
        "dtypes: f32,f16,bf16\n"
        "inputs: A=uniform(-2,2) B=normal(0,0.5)\n"
        "*/\n"
        "extern \"C\" __global__ void mm(const KG_T *A, const KG_T *B, KG_T *C, int M, int N, int K, float alpha) {}\n";
    struct kg_contract *c;
    struct kg_err e;
    int rc = load(".cu", text, &c, &e);
    if (rc) fprintf(stderr, "%s\n", e.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(c->nargs, 7);
    assert_true(c->args[6].value == 1e-5);
    assert_int_equal(c->args[6].sym, -1);
    assert_true(c->tol_k == 4);
    assert_false(c->deterministic);
    assert_int_equal(c->ndtypes, 3);
    assert_int_equal(c->dtypes[2], KG_BF16);
    assert_int_equal(c->args[0].dist, KG_AD_UNIFORM);
    assert_true(c->args[1].dist_b == 0.5);
    struct kg_case k;
    assert_int_equal(kg_case_init(&k, c, NULL, KG_F16, 1, KG_DIST_NORMAL, &e), 0);
    assert_int_equal(k.grid[0], 2);
    assert_int_equal(k.grid[1], 4);
    assert_int_equal(k.block[1], 16);
    assert_int_equal(k.smem, 2048);
    assert_int_equal(k.adtype[0], KG_F16);
    assert_int_equal(k.adtype[2], KG_F16);
    kg_contract_free(c);
}

/* Each malformed header (len bytes): the expected line and a phrase of the message. */
static void expect_error_n(const char *ext, const char *text, size_t len, int line, const char *phrase)
{
    struct kg_contract *c = NULL;
    struct kg_err e;
    int rc = load_n(ext, text, len, &c, &e);
    if (rc != -1) fprintf(stderr, "accepted, but should say: %s\n", phrase);
    kg_contract_free(c);
    assert_int_equal(rc, -1);
    assert_null(c);
    char where[300];
    if (line)
        snprintf(where, sizeof where, "%s:%d:", path, line);
    else
        snprintf(where, sizeof where, "%s: ", path);
    if (!strstr(e.msg, where) || !strstr(e.msg, phrase))
        fprintf(stderr, "got: %s\nwant: %s ... %s\n", e.msg, where, phrase);
    assert_non_null(strstr(e.msg, where));
    assert_non_null(strstr(e.msg, phrase));
}

static void expect_error(const char *ext, const char *text, int line, const char *phrase)
{
    expect_error_n(ext, text, strlen(text), line, phrase);
}

/* A header that must load; returns the contract (the caller frees it). */
static struct kg_contract *expect_ok(const char *ext, const char *text)
{
    struct kg_contract *c = NULL;
    struct kg_err e;
    int rc = load(ext, text, &c, &e);
    if (rc) fprintf(stderr, "refused: %s\n", e.msg);
    assert_int_equal(rc, 0);
    return c;
}

#define HDR(body)            "/*@kgate\nname: t\nop: relu\nentry: f\n" body "*/\nvoid f(const float *x, float *y, int N) {}\n"
#define ARGS_N               "args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n"
#define INPUTS(tensor, dist) HDR("args: x: in " tensor "[N]; y: out f32[N]; N: int\nshape: N=4\ninputs: " dist "\n")

static void test_malformed_headers_name_file_and_line(void **state)
{
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nsweeep: N=1\n"), 7,
                 "unknown key 'sweeep'");
    expect_error(".c", HDR("args: x: in f31[N]; y: out f32[N]; N: int\nshape: N=4\n"), 5, "unknown dtype 'f31'");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[Q]; N: int\nshape: N=4\n"), 5, "undefined symbol 'Q'");
    expect_error(".c", HDR("args: x: sideways f32[N]; y: out f32[N]; N: int\nshape: N=4\n"), 5,
                 "expected in, out, inout");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=four\n"), 6,
                 "expected a non-negative integer");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nsweep: M=1\n"), 7,
                 "undefined symbol 'M'");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\ntolerance: k=0.5\n"), 7,
                 "k must be a number from 1 to 1e6");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\ndeterministic: maybe\n"), 7,
                 "expected yes or no");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nalias: y=z\n"), 7,
                 "no arg named 'z'");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nname: again\n"), 7, "given twice");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int; M: int\nshape: N=4\n"), 5,
                 "scalar 'M' has no shape symbol");
    expect_error(".c", HDR("args: x: in f32[N]; y: in f32[N]; N: int\nshape: N=4\n"), 5, "no out or inout tensor");
    expect_error(".c", HDR("args: x: in T[N]; y: out T[N]; N: int\nshape: N=4\n"), 5, "needs a 'dtypes:' line");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\ninputs: x=gaussian\n"), 7,
                 "unknown distribution 'gaussian'");
    expect_error(".cu", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n"), 1, "missing 'launch:'");
    expect_error(".cu", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nlaunch: grid=cdiv(N,B) block=32\n"),
                 7, "undefined symbol 'B'");
    expect_error(".cu", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nlaunch: grid=N block=(1,2,3,4)\n"),
                 7, "more than 3 dims");
    expect_error(".cu", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nlaunch: grid=N\n"), 7,
                 "both required");
    expect_error(".c", "/*@kgate\nname: t\nop: relu\nargs: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n*/\n", 1,
                 "missing 'entry:'");
    expect_error(".c", "/*@kgate\nname: t\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n*/\n", 1,
                 "missing 'op:'");
    expect_error(
        ".c",
        "/*@kgate\nname: t\nop: softmax(dim=1)\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n*/\n",
        3, "dim");
    expect_error(".c", "int x;\n", 1, "no contract");
    expect_error(".txt", "int x;\n", 0, "unknown kernel language");
}

/* With several keys wrong, the first reported is the first in the order keys are interpreted
 * (contract.c's key table), not the first in the file. */
static void test_errors_are_reported_in_key_table_order(void **state)
{
    const char *args = "args: x: in f32[N]; y: out f32[N]; N: int\n";
    char text[512];
    expect_error(".c", HDR("args: x: in f31[N]; y: out f32[N]; N: int\nshape: N=four\n"), 6, "non-negative integer");
    snprintf(text, sizeof text, HDR("%sshape: N=4\nlaunch: grid=N\nsweep: M=1\n"), args);
    expect_error(".cu", text, 8, "undefined symbol 'M'");
    snprintf(text, sizeof text, HDR("%sshape: N=4\nlaunch: grid=N\noracle: ref\n"), args);
    expect_error(".cu", text, 7, "both required");
    snprintf(text, sizeof text, "/*@kgate\nop: nope\noracle: ref\nentry: f\n%sshape: N=4\n*/\n", args);
    expect_error(".c", text, 3, "give either 'op:'");
    snprintf(text, sizeof text, HDR("%sshape: N=4\ndeterministic: maybe\ntolerance: k=0.5\n"), args);
    expect_error(".c", text, 8, "k must be a number from 1 to 1e6");
    snprintf(text, sizeof text, HDR("%sshape: N=4\nalias: y=z\ndtypes: f32\n"), args);
    expect_error(".c", text, 8, "no arg has dtype T");
    snprintf(text, sizeof text, HDR("%sshape: N=4\ninputs: x=gaussian\nalias: y=z\n"), args);
    expect_error(".c", text, 8, "alias: no arg named 'z'");
    expect_error(".c", HDR("args: x: in f32[N]; y: in f32[N]; N: int\nshape: N=4\ninputs: x=gaussian\n"), 7,
                 "unknown distribution");
    expect_error(".c",
                 "/*@kgate\nop: relu\nentry: f\nargs: x: in f32[N]; y: in f32[N]; N: int\nshape: N=4\n*/\n"
                 "void f(const float *a) {}\n",
                 4, "no out or inout tensor");
    snprintf(text, sizeof text, "/*@kgate\nname: \nop: relu\n%sshape: N=4\n*/\n", args);
    expect_error(".c", text, 1, "missing 'entry:'");
}

/* An infinite k makes every calibrated threshold infinite, so a wrong kernel would pass. */
static void test_tolerance_k_must_be_finite(void **state)
{
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\ntolerance: k=inf\n"), 7,
                 "k must be a number from 1 to 1e6, got 'inf'");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\ntolerance: k=Infinity\n"), 7,
                 "k must be a number from 1 to 1e6");
}

static void test_signature_is_checked_against_args(void **state)
{
    expect_error(".c",
                 "/*@kgate\nop: relu\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n*/\n"
                 "void f(const float *x, float *y) {}\n",
                 4, "3 declared, but f (line 7) takes 2 parameters");
    expect_error(".c",
                 "/*@kgate\nop: relu\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n*/\n"
                 "void f(const float *in, float *y, int N) {}\n",
                 4, "is named 'in'");
    /* a call of the entry elsewhere is not its definition, a macro-made entry is not checked */
    struct kg_contract *c;
    struct kg_err e;
    assert_int_equal(load(".c",
                          "/*@kgate\nop: relu\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n*/\n"
                          "#define K(n) void n(const float *x, float *y, int N) {}\nK(f)\n",
                          &c, &e),
                     0);
    assert_int_equal(c->line_entry_def, 0);
    kg_contract_free(c);
    assert_int_equal(load(".c",
                          "/*@kgate\nop: relu\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\n*/\n"
                          "/* f(a, b) in a comment */ int f(const float *x, float *y, int N) { return 0; }\n",
                          &c, &e),
                     0);
    assert_true(c->entry_returns_int);
    kg_contract_free(c);
}

/* A NUL byte is reported where it is, not as "not a text file" of the whole file. */
static void test_nul_byte_names_its_line(void **state)
{
    static const char in_code[] = "/*@kgate\nop: relu\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: int\n"
                                  "shape: N=4\n*/\nvoid f(const float *x, float *y, int N) {\0}\n";
    expect_error_n(".c", in_code, sizeof in_code - 1, 7, "NUL byte at column 42");
    static const char in_header[] = "/*@kgate\nop: re\0lu\nentry: f\n*/\n";
    expect_error_n(".c", in_header, sizeof in_header - 1, 2, "NUL byte at column 7");
}

/* k is a factor on the reference's own error: past 1e6 even an fp32 elementwise kernel (error
 * ~6e-8) may be off by several percent, so a larger k only hides wrong kernels. */
static void test_tolerance_k_is_bounded_and_alone(void **state)
{
    expect_error(".c", HDR(ARGS_N "tolerance: k=1e308\n"), 7, "k must be a number from 1 to 1e6, got '1e308'");
    expect_error(".c", HDR(ARGS_N "tolerance: k=1000001\n"), 7, "from 1 to 1e6");
    expect_error(".c", HDR(ARGS_N "tolerance: x k=4\n"), 7, "tolerance: expected k=NUMBER, got 'x k=4'");
    expect_error(".c", HDR(ARGS_N "tolerance: kk=4\n"), 7, "expected k=NUMBER");
    struct kg_contract *c = expect_ok(".c", HDR(ARGS_N "tolerance: k=1e6\n"));
    assert_true(c->tol_k == 1e6);
    kg_contract_free(c);
    c = expect_ok(".c", HDR(ARGS_N "tolerance: k=1\n"));
    assert_true(c->tol_k == 1);
    kg_contract_free(c);
}

static void test_input_distributions_are_finite_ordered_and_fit(void **state)
{
    expect_error(".c", INPUTS("f32", "x=normal(nan,inf)"), 7, "normal(MEAN,STD) needs a finite MEAN");
    expect_error(".c", INPUTS("f32", "x=normal(0,inf)"), 7, "a finite STD > 0");
    expect_error(".c", INPUTS("f32", "x=normal(0,0)"), 7, "a finite STD > 0");
    expect_error(".c", INPUTS("f32", "x=normal(0,-1)"), 7, "a finite STD > 0");
    expect_error(".c", INPUTS("f32", "x=uniform(1,0)"), 7, "uniform(LO,HI) needs finite LO < HI");
    expect_error(".c", INPUTS("f32", "x=uniform(-inf,inf)"), 7, "uniform(LO,HI) needs finite LO < HI");
    expect_error(".c", INPUTS("f32", "x=uniform(0,nan)"), 7, "uniform(LO,HI) needs finite LO < HI");
    expect_error(".c", INPUTS("i64", "x=int(0,2^63-1)"), 7, "'2^63-1' is not a number");
    expect_error(".c", INPUTS("i64", "x=int(0,9223372036854775807)"), 7,
                 "int(LO,HI) on i64 needs -2^53 <= LO <= HI <= 2^53");
    expect_error(".c", INPUTS("i32", "x=int(0,3000000000)"), 7, "on i32 needs -2147483648 <= LO <= HI <= 2147483647");
    expect_error(".c", INPUTS("u8", "x=int(0,256)"), 7, "on u8 needs 0 <= LO <= HI <= 255");
    expect_error(".c", INPUTS("u8", "x=int(-1,3)"), 7, "on u8 needs 0 <= LO");
    expect_error(".c", INPUTS("bool", "x=int"), 7, "on bool needs 0 <= LO <= HI <= 1");
    expect_error(".c", INPUTS("f16", "x=int(0,4096)"), 7, "on f16 needs -2048 <= LO <= HI <= 2048");
    expect_error(".c", INPUTS("i32", "x=int(0,1.5)"), 7, "int(LO,HI) needs integers");
    expect_error(".c", INPUTS("i32", "x=int(3,2)"), 7, "LO <= HI");
    expect_error(".c", INPUTS("f32", "x=normal(0,1)x"), 7, "unexpected 'x' after ')'");
    expect_error(".c", INPUTS("f32", "x=normal(0,1,2)"), 7, "normal takes at most 2 parameters");
    expect_error(".c", INPUTS("f32", "x=normal()"), 7, "'' is not a number");
    expect_error(".c", INPUTS("f32", "x=normal(0,1"), 7, "expected ')'");
    expect_error(".c", INPUTS("f32", "x=unitrows(2)"), 7, "unitrows takes no parameters");
    expect_error(".c", INPUTS("f32", "x=normal x=uniform"), 7, "inputs: 'x' given twice");
    /* a T tensor must fit every instance */
    expect_error(".c",
                 HDR("args: x: in T[N]; y: out T[N]; N: int\nshape: N=4\ndtypes: f32,bf16\ninputs: x=int(0,300)\n"), 8,
                 "on bf16 needs -256 <= LO <= HI <= 256");
    struct kg_contract *c = expect_ok(".c", INPUTS("i32", "x=int(-2147483648,2147483647)"));
    assert_int_equal(c->args[0].dist, KG_AD_INT);
    assert_true(c->args[0].dist_a == -2147483648.0 && c->args[0].dist_b == 2147483647.0);
    kg_contract_free(c);
    c = expect_ok(".c", INPUTS("f32", "x=normal(1.5)"));
    assert_true(c->args[0].dist_a == 1.5 && c->args[0].dist_b == 1);
    kg_contract_free(c);
}

/* A scalar takes its symbol's value as the declared C type: a value it cannot hold is the
 * contract's error, at load (exit 2), not a gate error when a case is built. */
static void test_scalar_values_fit_their_type(void **state)
{
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=3000000000\n"), 6,
                 "shape: N=3000000000 does not fit 'N: int' (at most 2147483647; declare N: long)");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: int\nshape: N=4\nsweep: N=1,2147483648\n"), 7,
                 "sweep: N=2147483648 does not fit 'N: int'");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: long; a: int = inf\nshape: N=4\n"), 5,
                 "args: 'a': inf does not fit int");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: long; a: int = 1e12\nshape: N=4\n"), 5,
                 "args: 'a': 1e12 does not fit int");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: long; a: long = 1e19\nshape: N=4\n"), 5,
                 "args: 'a': 1e19 does not fit long");
    expect_error(".c", HDR("args: x: in f32[N]; y: out f32[N]; N: long; a: float = 1e39\nshape: N=4\n"), 5,
                 "args: 'a': 1e39 does not fit float");
    struct kg_contract *c = expect_ok(".c", "/*@kgate\nop: relu\nentry: f\nargs: x: in f32[N]; y: out f32[N]; N: long; "
                                            "a: int = -2147483648\nshape: N=3000000000\n*/\n"
                                            "void f(const float *x, float *y, long N, int a) {}\n");
    assert_true(c->args[3].value == -2147483648.0);
    kg_contract_free(c);
}

/* When a later dim of an arg fails, the dims already parsed are freed (LeakSanitizer). */
static void test_failed_dims_do_not_leak(void **state)
{
    expect_error(".c", HDR("args: x: in f32[N,N,Q]; y: out f32[N]; N: int\nshape: N=4\n"), 5, "undefined symbol 'Q'");
    expect_error(".c", HDR("args: x: in f32[N,N+]; y: out f32[N]; N: int\nshape: N=4\n"), 5, "dim 1 'N+'");
    expect_error(".cu", HDR(ARGS_N "launch: grid=(N,N,(N) block=1\n"), 7, "launch: grid");
    expect_error(".cu", HDR(ARGS_N "launch: grid=(N,N) block=(1,Q)\n"), 7, "undefined symbol 'Q'");
}

static void test_smaller_syntax_errors(void **state)
{
    /* "(N,2)+(1)" is one expression (and not a valid one), not a tuple */
    expect_error(".cu", HDR(ARGS_N "launch: grid=(N,2)+(1) block=1\n"), 7, "launch: grid '(N,2)+(1)'");
    expect_error(".c", HDR(ARGS_N "dtypes: f32,f32\n"), 7, "dtypes: f32 listed twice");
    expect_error(".c", HDR(ARGS_N "sweep: N=\n"), 7, "sweep: N= has no values (write N=V1,V2,...)");
    expect_error(".c", HDR(ARGS_N "sweep: N=,\n"), 7, "sweep: N= has no values");
    const char *two_in = "args: x: in f32[N]; w: in f32[N]; y: out f32[N]; z: out f32[N]; N: int\nshape: N=4\n";
    char text[512];
    snprintf(text, sizeof text, HDR("%salias: y=x y=w\n"), two_in);
    expect_error(".c", text, 7, "alias: y is given twice");
    snprintf(text, sizeof text, HDR("%salias: y=x z=x\n"), two_in);
    expect_error(".c", text, 7, "alias: x is the buffer of both y and z");
}

/* The count of the entry's parameters is the real one, past what args: can declare. */
static void test_long_parameter_lists_are_counted(void **state)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "/*@kgate\nop: relu\nentry: f\n" ARGS_N "*/\nvoid f(");
    for (int i = 0; i < 40; i++) n += (size_t)snprintf(text + n, sizeof text - n, "%sint p%d", i ? ", " : "", i);
    snprintf(text + n, sizeof text - n, ") {}\n");
    expect_error(".c", text, 4, "3 declared, but f (line 7) takes 40 parameters");
}

/* The scan of the source knows char literals: '"' is not the start of a string. */
static void test_char_literals_do_not_hide_the_entry(void **state)
{
    expect_error(".c",
                 "/*@kgate\nop: relu\nentry: f\n" ARGS_N "*/\n"
                 "static const char q = '\"'; void f(const float *x, float *y) {}\n",
                 4, "3 declared, but f (line 7) takes 2 parameters");
    expect_error(".c",
                 "/*@kgate\nop: relu\nentry: f\n" ARGS_N "*/\n"
                 "static const char q = '\\'', r = '/'; void f(const float *x, float *y) {}\n",
                 4, "takes 2 parameters");
    /* a C++14 digit separator (CUDA C) is no char literal */
    expect_error(".cu",
                 "/*@kgate\nop: relu\nentry: f\n" ARGS_N "launch: grid=N block=1\n*/\n"
                 "static const int big = 1'000; __global__ void f(const float *x, float *y) {}\n",
                 4, "3 declared, but f (line 8) takes 2 parameters");
    /* a string with a quote in it still hides its contents */
    struct kg_contract *c =
        expect_ok(".c", "/*@kgate\nop: relu\nentry: f\n" ARGS_N "*/\n"
                        "static const char *s = \"'f(\"; void f(const float *x, float *y, int N) {}\n");
    assert_int_equal(c->line_entry_def, 7);
    kg_contract_free(c);
}

/* A file that starts with the entry's name: the scan looks at what precedes the name only
 * inside the buffer (this ran under UBSan/ASan in the sanitizer build). */
static void test_entry_name_at_the_start_of_the_file(void **state)
{
    struct kg_contract *c = expect_ok(".c", "f(x)\n/*@kgate\nop: relu\nentry: f\n" ARGS_N
                                            "*/\nvoid f(const float *x, float *y, int N) {}\n");
    assert_int_equal(c->line_entry_def, 8);
    kg_contract_free(c);
}

/* strdup fails for the path named here (this program's strdup is the one libkgate calls). */
static const char *strdup_fails_for;

char *strdup(const char *s)
{
    if (strdup_fails_for && !strcmp(s, strdup_fails_for)) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static void test_out_of_memory_names_the_file(void **state)
{
    struct kg_contract *c = NULL;
    struct kg_err e;
    const char *text = HDR(ARGS_N);
    strdup_fails_for = "kernel.c";
    int rc = kg_contract_load_text("kernel.c", text, strlen(text), &c, &e);
    strdup_fails_for = NULL;
    assert_int_equal(rc, -1);
    assert_null(c);
    assert_string_equal(e.msg, "kernel.c: out of memory");
}

static int lookup(void *ud, const char *name, size_t n)
{
    (void)ud;
    if (n == 1 && name[0] == 'N') return 0;
    if (n == 1 && name[0] == 'M') return 1;
    return -1;
}

static int64_t ev(const char *s, int64_t n, int64_t m)
{
    struct kg_err e;
    int col;
    struct kg_expr *x = kg_expr_parse(s, strlen(s), lookup, NULL, &col, &e);
    assert_non_null(x);
    int64_t sym[2] = {n, m}, out = 0;
    assert_int_equal(kg_expr_eval(x, sym, &out, &e), 0);
    kg_expr_free(x);
    return out;
}

static void test_expressions(void **state)
{
    assert_int_equal(ev("cdiv(N, 256)", 1000, 0), 4);
    assert_int_equal(ev("cdiv(N,256)", 1024, 0), 4);
    assert_int_equal(ev("N*M + 3 % 2", 6, 7), 43);
    assert_int_equal(ev("min(N, M) * max(N, M) - (N - M)", 3, 9), 33);
    assert_int_equal(ev("-N + 10", 4, 0), 6);
    assert_int_equal(ev("N / 3", 10, 0), 3);
    struct kg_err e;
    int col = 0;
    assert_null(kg_expr_parse("N + K", 5, lookup, NULL, &col, &e));
    assert_non_null(strstr(e.msg, "undefined symbol 'K'"));
    assert_int_equal(col, 4);
    assert_null(kg_expr_parse("cdiv(N)", 7, lookup, NULL, &col, &e));
    assert_null(kg_expr_parse("pow(N,2)", 8, lookup, NULL, &col, &e));
    assert_non_null(strstr(e.msg, "unknown function 'pow'"));
    assert_null(kg_expr_parse("N +", 3, lookup, NULL, &col, &e));
    /* a number past int64 is an error, not INT64_MAX */
    assert_null(kg_expr_parse("N * 99999999999999999999", 24, lookup, NULL, &col, &e));
    assert_non_null(strstr(e.msg, "number too large"));
    struct kg_expr *x = kg_expr_parse("N / (M - M)", 11, lookup, NULL, &col, &e);
    int64_t sym[2] = {1, 2}, out;
    assert_int_equal(kg_expr_eval(x, sym, &out, &e), -1);
    assert_non_null(strstr(e.msg, "division by zero"));
    kg_expr_free(x);
    x = kg_expr_parse("N * N", 5, lookup, NULL, &col, &e);
    int64_t big[2] = {INT64_MAX / 2, 0};
    assert_int_equal(kg_expr_eval(x, big, &out, &e), -1);
    assert_non_null(strstr(e.msg, "overflow"));
    kg_expr_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_issue_example_parses),
        cmocka_unit_test(test_optional_keys_tuples_and_continuations),
        cmocka_unit_test(test_malformed_headers_name_file_and_line),
        cmocka_unit_test(test_errors_are_reported_in_key_table_order),
        cmocka_unit_test(test_tolerance_k_must_be_finite),
        cmocka_unit_test(test_signature_is_checked_against_args),
        cmocka_unit_test(test_nul_byte_names_its_line),
        cmocka_unit_test(test_tolerance_k_is_bounded_and_alone),
        cmocka_unit_test(test_input_distributions_are_finite_ordered_and_fit),
        cmocka_unit_test(test_scalar_values_fit_their_type),
        cmocka_unit_test(test_failed_dims_do_not_leak),
        cmocka_unit_test(test_smaller_syntax_errors),
        cmocka_unit_test(test_long_parameter_lists_are_counted),
        cmocka_unit_test(test_char_literals_do_not_hide_the_entry),
        cmocka_unit_test(test_entry_name_at_the_start_of_the_file),
        cmocka_unit_test(test_out_of_memory_names_the_file),
        cmocka_unit_test(test_expressions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
