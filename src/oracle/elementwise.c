/* elementwise.c: the pointwise ops (activations, scale, add, mul). Each is one scalar
 * function of the arithmetic mode: in KG_W32 every intermediate is rounded to fp32 and a
 * transcendental is taken in double on an fp32 argument, then rounded; the other modes are
 * plain double. Shapes are checked by the generic rule (all identical, no broadcasting). */
#include <math.h>

#include "oracle/oracle.h"

/* sqrt(2/pi), the gelu tanh-approximation's constant. */
#define SQRT_2_OVER_PI 0.7978845608028654

typedef double (*unary_fn)(enum kg_arith a, double x, const double *param);
typedef double (*binary_fn)(enum kg_arith a, double x, double y);

static int eval_unary(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                      struct kg_tensor *const *out, unary_fn f)
{
    const double *x = in[0]->data;
    double *y = out[0]->data;
    for (int64_t i = 0; i < in[0]->numel; i++) y[i] = f(a, kg_ar(a, x[i]), c->param);
    return 0;
}

static int eval_binary(enum kg_arith a, const struct kg_tensor *const *in, struct kg_tensor *const *out, binary_fn f)
{
    const double *x = in[0]->data, *y = in[1]->data;
    double *z = out[0]->data;
    for (int64_t i = 0; i < in[0]->numel; i++) z[i] = f(a, kg_ar(a, x[i]), kg_ar(a, y[i]));
    return 0;
}

/* ---- scalar functions ------------------------------------------------------------------ */

/* Not fmax: fmax(NaN, 0) is 0, and a kernel that turns NaN into 0 must not look right. */
static double relu(enum kg_arith a, double x, const double *p)
{
    return x > 0 ? x : (x != x ? x : 0.0);
}

static double leaky_relu(enum kg_arith a, double x, const double *p)
{
    return x > 0 ? x : kg_ar(a, x * kg_ar(a, p[0]));
}

/* gelu, gelu_tanh and silu follow their formulas in IEEE arithmetic, as PyTorch does today:
 * at -inf that is -inf * 0 = NaN, not the limit 0. Nearly every kernel writes the formula, so
 * the tolerance-free nonfinite gate must expect NaN there (kgate-contract(5) says so). */
static double gelu(enum kg_arith a, double x, const double *p)
{
    double t = kg_ar(a, x * kg_ar(a, M_SQRT1_2));
    double u = kg_ar(a, 1.0 + kg_ar(a, erf(t)));
    return kg_ar(a, kg_ar(a, 0.5 * x) * u);
}

static double gelu_tanh(enum kg_arith a, double x, const double *p)
{
    double x3 = kg_ar(a, kg_ar(a, x * x) * x);
    double inner = kg_ar(a, x + kg_ar(a, kg_ar(a, 0.044715) * x3));
    double t = kg_ar(a, tanh(kg_ar(a, kg_ar(a, SQRT_2_OVER_PI) * inner)));
    return kg_ar(a, kg_ar(a, 0.5 * x) * kg_ar(a, 1.0 + t));
}

static double silu(enum kg_arith a, double x, const double *p)
{
    return kg_ar(a, x / kg_ar(a, 1.0 + kg_ar(a, exp(-x))));
}

static double sigmoid(enum kg_arith a, double x, const double *p)
{
    return kg_ar(a, 1.0 / kg_ar(a, 1.0 + kg_ar(a, exp(-x))));
}

static double tanh_(enum kg_arith a, double x, const double *p)
{
    return kg_ar(a, tanh(x));
}

static double exp_(enum kg_arith a, double x, const double *p)
{
    return kg_ar(a, exp(x));
}

static double scale(enum kg_arith a, double x, const double *p)
{
    return kg_ar(a, x * kg_ar(a, p[0]));
}

static double add(enum kg_arith a, double x, double y)
{
    return kg_ar(a, x + y);
}

static double mul(enum kg_arith a, double x, double y)
{
    return kg_ar(a, x * y);
}

/* ---- opdefs ---------------------------------------------------------------------------- */

#define UNARY_EVAL(fn)                                                                                                 \
    static int fn##_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,                \
                         struct kg_tensor *const *out, struct kg_err *e)                                               \
    {                                                                                                                  \
        return eval_unary(c, a, in, out, fn);                                                                          \
    }

UNARY_EVAL(relu)
UNARY_EVAL(leaky_relu)
UNARY_EVAL(gelu)
UNARY_EVAL(gelu_tanh)
UNARY_EVAL(silu)
UNARY_EVAL(sigmoid)
UNARY_EVAL(tanh_)
UNARY_EVAL(exp_)
UNARY_EVAL(scale)

static int add_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                    struct kg_tensor *const *out, struct kg_err *e)
{
    return eval_binary(a, in, out, add);
}

static int mul_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                    struct kg_tensor *const *out, struct kg_err *e)
{
    return eval_binary(a, in, out, mul);
}

const struct kg_opdef kg_opdef_relu = {.name = "relu",
                                       .n_in = 1,
                                       .n_out = 1,
                                       .flags = KG_OP_ELEMENTWISE,
                                       .doc = "relu: x -> y = max(x, 0), same shape (NaN stays NaN)",
                                       .eval = relu_eval};

const struct kg_opdef kg_opdef_leaky_relu = {.name = "leaky_relu",
                                             .n_in = 1,
                                             .n_out = 1,
                                             .params = {"slope"},
                                             .defaults = {0.01},
                                             .flags = KG_OP_ELEMENTWISE,
                                             .doc = "leaky_relu(slope=0.01): x -> y = x > 0 ? x : slope*x, same shape",
                                             .eval = leaky_relu_eval};

const struct kg_opdef kg_opdef_gelu = {.name = "gelu",
                                       .n_in = 1,
                                       .n_out = 1,
                                       .flags = KG_OP_ELEMENTWISE,
                                       .doc = "gelu: x -> y = 0.5*x*(1+erf(x/sqrt(2))), same shape",
                                       .eval = gelu_eval};

const struct kg_opdef kg_opdef_gelu_tanh = {
    .name = "gelu_tanh",
    .n_in = 1,
    .n_out = 1,
    .flags = KG_OP_ELEMENTWISE,
    .doc = "gelu_tanh: x -> y = 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))), same shape",
    .eval = gelu_tanh_eval};

const struct kg_opdef kg_opdef_silu = {.name = "silu",
                                       .n_in = 1,
                                       .n_out = 1,
                                       .flags = KG_OP_ELEMENTWISE,
                                       .doc = "silu: x -> y = x*sigmoid(x), same shape",
                                       .eval = silu_eval};

const struct kg_opdef kg_opdef_sigmoid = {.name = "sigmoid",
                                          .n_in = 1,
                                          .n_out = 1,
                                          .flags = KG_OP_ELEMENTWISE,
                                          .doc = "sigmoid: x -> y = 1/(1+exp(-x)), same shape",
                                          .eval = sigmoid_eval};

const struct kg_opdef kg_opdef_tanh = {.name = "tanh",
                                       .n_in = 1,
                                       .n_out = 1,
                                       .flags = KG_OP_ELEMENTWISE,
                                       .doc = "tanh: x -> y = tanh(x), same shape",
                                       .eval = tanh__eval};

const struct kg_opdef kg_opdef_exp = {.name = "exp",
                                      .n_in = 1,
                                      .n_out = 1,
                                      .flags = KG_OP_ELEMENTWISE,
                                      .doc = "exp: x -> y = exp(x), same shape",
                                      .eval = exp__eval};

const struct kg_opdef kg_opdef_scale = {.name = "scale",
                                        .n_in = 1,
                                        .n_out = 1,
                                        .params = {"alpha"},
                                        .defaults = {NAN},
                                        .flags = KG_OP_ELEMENTWISE,
                                        .doc = "scale(alpha): x -> y = alpha*x, same shape",
                                        .eval = scale_eval};

const struct kg_opdef kg_opdef_add = {.name = "add",
                                      .n_in = 2,
                                      .n_out = 1,
                                      .flags = KG_OP_ELEMENTWISE,
                                      .doc = "add: a, b -> c = a+b, all the same shape (no broadcasting)",
                                      .eval = add_eval};

const struct kg_opdef kg_opdef_mul = {.name = "mul",
                                      .n_in = 2,
                                      .n_out = 1,
                                      .flags = KG_OP_ELEMENTWISE,
                                      .doc = "mul: a, b -> c = a*b, all the same shape (no broadcasting)",
                                      .eval = mul_eval};
