/* memo.c: inputs and oracle values of recent cases, computed once per check. Gates ask for the
 * same nominal case many times; on large tensors generating inputs and evaluating the oracle
 * cost more than the runs. Callers are lent the memo's own tensors (read only), and a case that
 * is lent out is neither evicted nor replaced until every loan is given back. */
#include <stdio.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/oracle_worker.h"
#include "engine/session.h"

static void memo_clear(struct kg_case_memo *m)
{
    if (m->has_in) kg_inputs_free(&m->in);
    if (m->has_ex) kg_expect_free(&m->ex);
    memset(m, 0, sizeof *m);
}

void kg_memo_free(struct kg_session *s)
{
    for (int i = 0; i < KG_CASE_CACHE; i++) memo_clear(&s->memo[i]);
}

/* One memo event counted (and printed under KGATE_DEBUG_MEMO): what ("inputs", "oracle"),
 * whether it was a hit; a miss for a case made before in this session counts as made again. */
static void memo_event(struct kg_session *s, const char *id, bool oracle, bool hit, double seconds)
{
    struct kg_memo_stats *st = &s->memo_stats;
    bool again = false;
    if (!hit) {
        uint64_t h = kg_hash64(id, strlen(id), 0), *seen = oracle ? st->seen_ex : st->seen_in;
        int *n = oracle ? &st->nseen_ex : &st->nseen_in;
        for (int i = 0; i < *n && !again; i++) again = seen[i] == h;
        if (!again && *n < KG_MEMO_SEEN) seen[(*n)++] = h;
        *(oracle ? &st->oracle_made : &st->inputs_made) += 1;
        if (again) *(oracle ? &st->oracle_again : &st->inputs_again) += 1;
    } else {
        *(oracle ? &st->oracle_reused : &st->inputs_reused) += 1;
    }
    if (s->debug_memo)
        fprintf(stderr, "kgate memo: %s: %s %s %s (%.3f s)\n", s->current_gate ? s->current_gate->id : "-",
                oracle ? "oracle" : "inputs",
                hit     ? "reused"
                : again ? "made again"
                        : "made",
                id, seconds);
}

static uint64_t memo_bytes(const struct kg_case_memo *m)
{
    uint64_t b = 0;
    for (int i = 0; i < KG_MAX_ARGS; i++) b += m->in.t[i].data ? (uint64_t)kg_tensor_bytes(&m->in.t[i]) : 0;
    for (int j = 0; j < KG_OP_MAX_IO; j++) { /* views of an oracle's segment too: it keeps only their pages */
        const struct kg_tensor *t[] = {&m->ex.exact[j], &m->ex.ref[j], &m->ex.alt[j]};
        for (int q = 0; q < 3; q++) b += t[q]->data ? (uint64_t)kg_tensor_bytes(t[q]) : 0;
    }
    return b + m->ex.resident.bytes; /* values kept in the oracle worker count as if here */
}

/* Whether a should be evicted before b: the lower rank first, then the least recently used. */
static bool evict_before(const struct kg_case_memo *a, const struct kg_case_memo *b)
{
    return a->rank != b->rank ? a->rank < b->rank : a->used < b->used;
}

/* Within the byte budget again after m grew: entries of m's rank or lower go, least valuable
 * first; m stays (its caller is using it), and so do the nominal cases a lesser one would push out. */
static void memo_fit(struct kg_session *s, struct kg_case_memo *m)
{
    m->bytes = memo_bytes(m);
    for (;;) {
        uint64_t total = 0;
        struct kg_case_memo *victim = NULL;
        for (int i = 0; i < KG_CASE_CACHE; i++) {
            struct kg_case_memo *o = &s->memo[i];
            total += o->bytes;
            if (o != m && !o->holds && (o->has_in || o->has_ex) && o->rank <= m->rank &&
                (!victim || evict_before(o, victim)))
                victim = o;
        }
        if (total <= s->memo_budget || !victim) return;
        if (s->debug_memo)
            fprintf(stderr, "kgate memo: %s: evicted %s (%llu bytes over the budget of %llu)\n",
                    s->current_gate ? s->current_gate->id : "-", victim->id,
                    (unsigned long long)(total - s->memo_budget), (unsigned long long)s->memo_budget);
        memo_clear(victim);
    }
}

/* The memo entry of case k, a free or the least valuable one otherwise (its values dropped);
 * NULL when every entry is lent out. */
static struct kg_case_memo *memo_slot(struct kg_session *s, const struct kg_case *k)
{
    char id[KG_CASE_ID_MAX];
    kg_case_id(k, id, sizeof id);
    struct kg_case_memo *victim = NULL, *empty = NULL;
    for (int i = 0; i < KG_CASE_CACHE; i++) {
        struct kg_case_memo *m = &s->memo[i];
        if (!m->has_in && !m->has_ex) {
            if (!empty && !m->holds) empty = m;
            continue;
        }
        if (!strcmp(m->id, id)) {
            m->used = ++s->memo_clock;
            return m;
        }
        if (!m->holds && (!victim || evict_before(m, victim))) victim = m;
    }
    if (empty) victim = empty;
    if (!victim) return NULL;
    memo_clear(victim);
    kg_strlcpy(victim->id, id, sizeof victim->id);
    victim->used = ++s->memo_clock;
    victim->rank = k->nominal && k->dist == KG_DIST_NORMAL ? (k->seed == s->o.seed ? 2 : 1) : 0;
    return victim;
}

/* m's inputs, made by the backend unless m holds them already. */
static int memo_inputs(struct kg_session *s, const struct kg_case *k, struct kg_case_memo *m, struct kg_err *e)
{
    if (kg_session_interrupted(s)) return kg_errf(e, "interrupted: the inputs were not made");
    if (!m->has_in) {
        double t0 = kg_now();
        if (s->be->inputs(s, k, &m->in, e)) return -1;
        static uint64_t serial;
        m->in.id = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED); /* checks of an audit share the process */
        m->has_in = true;
        memo_fit(s, m);
        s->t_inputs += kg_now() - t0;
        memo_event(s, m->id, false, false, kg_now() - t0);
    } else {
        memo_event(s, m->id, false, true, 0);
    }
    return 0;
}

int kg_session_inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e)
{
    memset(in, 0, sizeof *in); /* freeing it is harmless whatever happens below */
    struct kg_case_memo *m = memo_slot(s, k);
    if (!m) { /* every entry lent out: inputs of the caller's own */
        double t0 = kg_now();
        int rc = s->be->inputs(s, k, in, e);
        s->t_inputs += kg_now() - t0;
        return rc;
    }
    if (memo_inputs(s, k, m, e)) return -1;
    *in = m->in;
    in->holds = &m->holds;
    m->holds++;
    return 0;
}

int kg_session_expect(struct kg_session *s, const struct kg_case *k, struct kg_expect *x, struct kg_err *e)
{
    memset(x, 0, sizeof *x); /* freeing it is harmless whatever happens below */
    if (kg_case_fault(s, k)) {
        x->not_run = true;
        return 0;
    }
    struct kg_case_memo *m = memo_slot(s, k);
    if (!m) { /* every entry lent out: the caller's own inputs and values, made for it */
        struct kg_inputs in;
        if (s->be->inputs(s, k, &in, e)) return -1;
        int rc = kg_expect_eval(s, k, &in, x, e);
        kg_inputs_free(&in);
        return rc;
    }
    if (m->has_ex && m->ex.resident.id && !m->holds && !kg_oracle_resident_here(s, m->ex.resident.gen)) {
        /* the oracle worker that kept these values is gone (a CUDA error ends it): again */
        kg_expect_free(&m->ex);
        m->has_ex = false;
    }
    if (!m->has_ex) {
        /* the oracle reads the memo's own inputs (kg_expect_eval takes them const) */
        if (memo_inputs(s, k, m, e)) return -1;
        if (kg_session_interrupted(s)) return kg_errf(e, "interrupted: the oracle was not run");
        double t0 = kg_now();
        int rc = kg_expect_eval(s, k, &m->in, &m->ex, e);
        m->has_ex = rc == 0;
        if (m->has_ex) memo_fit(s, m);
        if (m->has_ex && m->ex.resident.id && s->debug_memo)
            fprintf(stderr, "kgate memo: %s: oracle values of %s kept in the oracle worker (%llu bytes)\n",
                    s->current_gate ? s->current_gate->id : "-", m->id, (unsigned long long)m->ex.resident.bytes);
        memo_event(s, m->id, true, false, kg_now() - t0);
        if (rc) return -1;
    } else {
        memo_event(s, m->id, true, true, 0);
    }
    *x = m->ex;
    x->holds = &m->holds;
    m->holds++;
    return 0;
}
