/* tensor.c: allocation, strides and index formatting of dense row-major tensors. */
#include "base/tensor.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"

int kg_tensor_alloc(struct kg_tensor *t, enum kg_dtype dtype, int rank, const int64_t *dims)
{
    if (rank < 0 || rank > KG_MAX_RANK) return -1;
    t->dtype = dtype;
    t->rank = rank;
    t->numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        t->dims[i] = dims[i];
        if (dims[i] && t->numel > INT64_MAX / dims[i]) return -1;
        t->numel *= dims[i];
    }
    size_t sz = kg_dtype_size(dtype);
    if (!sz || (uint64_t)t->numel > SIZE_MAX / sz) return -1;
    t->data = calloc(t->numel ? (size_t)t->numel : 1, sz);
    return t->data ? 0 : -1;
}

void kg_tensor_free(struct kg_tensor *t)
{
    free(t->data);
    t->data = NULL;
}

size_t kg_tensor_bytes(const struct kg_tensor *t)
{
    return (size_t)t->numel * kg_dtype_size(t->dtype);
}

void kg_tensor_strides(const struct kg_tensor *t, int64_t *strides)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= t->dims[i];
    }
}

void kg_tensor_index_str(const struct kg_tensor *t, int64_t flat, char *buf, size_t n)
{
    int64_t idx[KG_MAX_RANK];
    for (int i = t->rank - 1; i >= 0; i--) {
        int64_t d = t->dims[i] ? t->dims[i] : 1;
        idx[i] = flat % d;
        flat /= d;
    }
    size_t len = 0;
    buf[0] = '\0';
    kg_appendf(buf, n, &len, "[");
    for (int i = 0; i < t->rank; i++) kg_appendf(buf, n, &len, "%s%lld", i ? "," : "", (long long)idx[i]);
    kg_appendf(buf, n, &len, "]");
}

/* "[2,3]" for a shape; b must hold 8 * 21 + 3 bytes. */
const char *kg_shape_str(const struct kg_shape *s, char *b, size_t n)
{
    size_t len = 0;
    b[0] = '\0';
    kg_appendf(b, n, &len, "[");
    for (int i = 0; i < s->rank && i < KG_MAX_RANK; i++)
        kg_appendf(b, n, &len, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    kg_appendf(b, n, &len, "]");
    return b;
}
