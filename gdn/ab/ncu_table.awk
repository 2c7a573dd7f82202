# ncu_table.awk: one line per kernel launch from `ncu --csv --print-units base` output (other
# lines, the profiled program's own and ncu's ==PROF== ones, are skipped): its name (template
# arguments and parameters cut), grid, duration (us), compute (SM) / memory / DRAM throughput and
# achieved occupancy (% of peak), registers per thread; "-" for a metric the sections gave not.
#   awk -f gdn/ab/ncu_table.awk ncu.csv
# POSIX awk (no FPAT): the quoted fields are split by hand.

# csv(line, f): the fields of one CSV line into f[1..n], quotes removed; n
function csv(line, f,    n, i, c, q, cur) {
    n = 0
    cur = ""
    q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (c == "\"") { q = !q; continue }
        if (c == "," && !q) { f[++n] = cur; cur = ""; continue }
        cur = cur c
    }
    f[++n] = cur
    return n
}

# num(v, unit): v as a number, thousands separators dropped; durations in us
function num(v, unit) {
    gsub(/,/, "", v)
    if (unit == "nsecond" || unit == "ns") return v / 1000
    if (unit == "msecond" || unit == "ms") return v * 1000
    if (unit == "second" || unit == "s") return v * 1e6
    return v + 0
}

function val(id, m) { return (id SUBSEP m) in M ? sprintf(m == "Duration" ? "%.1f" : "%.0f", M[id, m]) : "-" }

/^"/ {
    n = csv($0, f)
    if (f[1] == "ID") {
        for (i = 1; i <= n; i++) col[f[i]] = i
        next
    }
    if (!("Metric Name" in col)) next
    id = f[col["ID"]]
    if (!(id in name)) {
        k = f[col["Kernel Name"]]
        sub(/\(.*/, "", k)
        sub(/<.*/, "", k)
        sub(/^void /, "", k)
        name[id] = k
        grid[id] = ("Grid Size" in col) ? f[col["Grid Size"]] : "-"
        order[++nk] = id
    }
    m = f[col["Metric Name"]]
    # MemoryWorkloadAnalysis has a "Memory Throughput" too, in byte/s: the table's is SpeedOfLight's %
    if (m == "Memory Throughput" && f[col["Metric Unit"]] != "%") next
    M[id, m] = num(f[col["Metric Value"]], f[col["Metric Unit"]])
}

END {
    if (!nk) { print "  (no kernel in ncu's output)"; exit }
    printf "  %-24s %-16s %9s %5s %5s %5s %5s %5s\n", "kernel", "grid", "us", "SM%", "mem%", "DRAM%", "occ%", "regs"
    for (j = 1; j <= nk; j++) {
        id = order[j]
        printf "  %-24s %-16s %9s %5s %5s %5s %5s %5s\n", name[id], grid[id], val(id, "Duration"),
            val(id, "Compute (SM) Throughput"), val(id, "Memory Throughput"), val(id, "DRAM Throughput"),
            val(id, "Achieved Occupancy"), val(id, "Registers Per Thread")
    }
}
