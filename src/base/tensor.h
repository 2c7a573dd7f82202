/* tensor.h: a dense row-major tensor: dtype, shape and a data pointer. Whoever allocates the
 * data owns it; kg_tensor_alloc/kg_tensor_free are the pair for data kgate allocates. */
#ifndef KG_TENSOR_H
#define KG_TENSOR_H

#include "base/dtype.h"

#define KG_MAX_RANK 8

/* A shape as the contract declares it, before data exists. */
struct kg_shape {
    int rank;
    int64_t dims[KG_MAX_RANK];
};

struct kg_tensor {
    enum kg_dtype dtype;
    int rank;
    int64_t dims[KG_MAX_RANK];
    int64_t numel;
    void *data;
};

/* Sets dims/numel and allocates zeroed data; -1 on overflow or allocation failure. */
int kg_tensor_alloc(struct kg_tensor *t, enum kg_dtype dtype, int rank, const int64_t *dims);
/* dst as a new copy of src (its dtype, shape and data); -1 as kg_tensor_alloc. */
int kg_tensor_copy(struct kg_tensor *dst, const struct kg_tensor *src);
/* dst allocated with this dtype and shape, its data copied from src. */
int kg_tensor_copy_from(struct kg_tensor *dst, enum kg_dtype dtype, int rank, const int64_t *dims, const void *src);
/* Frees t's data (large blocks are kept for the next allocations of about their size). */
void kg_tensor_free(struct kg_tensor *t);
size_t kg_tensor_bytes(const struct kg_tensor *t);
/* Row-major strides in elements. */
void kg_tensor_strides(const struct kg_tensor *t, int64_t *strides);
/* Writes "[i,j,k]" for flat index i. */
void kg_tensor_index_str(const struct kg_tensor *t, int64_t flat, char *buf, size_t n);
/* "[2,3,4]": a shape for messages, into KG_SHAPE_TEXT_MAX bytes; returns b. */
#define KG_SHAPE_TEXT_MAX (KG_MAX_RANK * 21 + 3)
const char *kg_shape_str(const struct kg_shape *s, char *b, size_t n);

#endif
