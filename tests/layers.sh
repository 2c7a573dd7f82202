#!/bin/sh
# layers.sh: the layering of ARCHITECTURE.md, checked on the built objects. Every object's
# symbol table (nm) says which symbols its file defines and which it uses; a use of a symbol
# defined in another file is a call (or a data reference) from one file to the other. It fails,
# naming file, layer and symbol, on
#   - a call into a higher layer, or between two layers of the same rank (peers never call each
#     other),
#   - a cycle between files (also inside one layer),
#   - an object in a folder that has no layer.
# It first checks itself on a made-up link graph with one of each fault, so that a checker that
# cannot fail does not pass.
set -u
b=${top_builddir:-.}

# folder -> rank and layer name, bottom up. A file belongs to the longest folder that prefixes
# its path. Generated sources live in the folder of the layer that uses them.
LAYERS='
gdn 0 gdn
src/base 0 base
src/oracle 1 oracle
src/contract 2 contract
probes 2 probes
src/worker 3 worker
src/runners 4 runners
src/engine 5 engine
gates 6 gates
src/audit 7 audit
tui 7 tui
src/cli 8 cli
'

# Reads "FILE D SYMBOL" (FILE defines SYMBOL) and "FILE U SYMBOL" (FILE uses it) lines and
# prints one line per fault; nothing when the graph is layered and acyclic.
check() {
    awk -v layers="$LAYERS" '
    function layer_of(f,   best, i) {
        best = ""
        for (i = 1; i <= nl; i++)
            if ((f ~ ("^" ldir[i] "/")) && length(ldir[i]) > length(best)) { best = ldir[i]; bi = i }
        if (best == "") return 0
        return bi
    }
    function dfs(u,   k, v, i, path) {
        state[u] = 1; stack[++sp] = u
        for (k = 1; k <= nadj[u]; k++) {
            v = adj[u, k]
            if (state[v] == 1 && !reported[v]) {
                path = ""
                for (i = sp; i >= 1; i--) { path = stack[i] (path == "" ? "" : " -> ") path; if (stack[i] == v) break }
                printf "cycle: %s -> %s (%s)\n", path, v, via[u, v]
                for (i = sp; i >= 1; i--) { reported[stack[i]] = 1; if (stack[i] == v) break }
            } else if (!state[v]) dfs(v)
        }
        sp--; state[u] = 2
    }
    BEGIN {
        n = split(layers, L, "\n"); nl = 0
        for (i = 1; i <= n; i++) {
            if (split(L[i], w, " ") != 3) continue
            nl++; ldir[nl] = w[1]; lrank[nl] = w[2]; lname[nl] = w[3]
        }
    }
    $2 == "D" { def[$3] = $1; files[$1] = 1; next }
    $2 == "U" { nu++; uf[nu] = $1; us[nu] = $3; files[$1] = 1 }
    END {
        for (f in files)
            if (!layer_of(f)) printf "no layer: %s is in no folder of tests/layers.sh (add it there and to ARCHITECTURE.md)\n", f
        for (i = 1; i <= nu; i++) {
            f = uf[i]; s = us[i]
            if (!(s in def)) continue
            g = def[s]
            if (g == f) continue
            a = layer_of(f); c = layer_of(g)
            if (!a || !c) continue
            if (a != c && lrank[c] >= lrank[a])
                printf "upward call: %s (%s) -> %s (%s): %s\n", f, lname[a], g, lname[c], s
            if (!((f, g) in via)) { nadj[f]++; adj[f, nadj[f]] = g; via[f, g] = s }
            else if (index(" " via[f, g] " ", " " s " ") == 0 && split(via[f, g], tmp, " ") < 4) via[f, g] = via[f, g] " " s
        }
        for (f in files) if (!state[f]) dfs(f)
    }'
}

# ---- the checker on a graph with known faults -------------------------------------------------
faults=$(check <<'EOF'
src/base/a.c D base_fn
src/engine/e.c D engine_fn
src/engine/f.c D other_fn
src/base/a.c U engine_fn
src/engine/e.c U other_fn
src/engine/f.c U engine_fn
src/audit/x.c D audit_fn
tui/y.c U audit_fn
src/nowhere/z.c D z_fn
EOF
)
for want in "upward call: src/base/a.c (base) -> src/engine/e.c (engine): engine_fn" \
    "upward call: tui/y.c (tui) -> src/audit/x.c (audit): audit_fn" "cycle: " "no layer: src/nowhere/z.c"; do
    case "$faults" in
    *"$want"*) ;;
    *) printf 'FAIL: the checker missed "%s" in a graph made to have it; it said:\n%s\n' "$want" "$faults"; exit 1 ;;
    esac
done

# ---- the real objects -------------------------------------------------------------------------
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
cd "$b" || exit 1
objs=$(find src gates tui probes gdn \( -path '*/.libs/*.o' -o -name 'kgate-*.o' \) 2>/dev/null | sort)
[ -n "$objs" ] || { echo "FAIL: no objects under $b (build first)"; exit 1; }
nobj=0
edges=$(for o in $objs; do
    # src/engine/.libs/exec.o -> src/engine/exec.c; tui/kgate-tui.o -> tui/tui.c
    f=$(echo "$o" | sed -e 's|/\.libs/|/|' -e 's|/kgate-|/|' -e 's|/libkgate_la-|/|' -e 's|\.o$|.c|')
    # an object left from a source that no longer exists is not part of the build
    [ -f "${top_srcdir:-.}/$f" ] || [ -f "$f" ] || continue
    nm -P "$o" | awk -v f="$f" '$2 == "U" { print f, "U", $1; next } $2 ~ /^[A-TV-Z]$/ { print f, "D", $1 }'
done)
nobj=$(echo "$edges" | awk '{print $1}' | sort -u | wc -l)
faults=$(echo "$edges" | check)
if [ -n "$faults" ]; then
    echo "$faults"
    echo "FAIL: $(echo "$faults" | wc -l) layering fault(s) in $nobj objects (see ARCHITECTURE.md, 'Layers')"
    exit 1
fi
nedges=$(echo "$edges" | awk '$2 == "U"' | wc -l)
echo "PASS: $nobj objects, $nedges symbol uses: no upward call, no cycle"
