#!/usr/bin/env python3
"""gdn/train_report.py: the CSVs of gdn/train.py (OUT/<task>_<member>_<run>.csv) into the table of
gdn/README.md and one SVG of loss curves per task.

    python3 gdn/train_report.py OUT [--final-window 100] [--plot auto|gnuplot|direct]

Final loss / accuracy: the mean over the last --final-window steps (one step's loss is noisy).
Columns: libgdn vs reference final loss, their relative and absolute difference, the relative
difference of the two runs' mean loss over all steps (the curves' areas), final accuracy and the
difference in points, whether all libgdn runs of the member gave bitwise identical loss curves
(the CSV strings are Python's repr of each loss, so equal strings are equal bits), and the median
ms per step (the first 10 steps, warm-up, left out), the fewest steps any run of the row
made (less than asked when train.py's --deadline stopped it), and which reference the row compares
with: chunked (run reference-chunked, kgate_gdn.chunked) or recurrent (reference-recurrent, or the
older name reference, kgate_gdn.recurrent); one row per reference a member has. Writes
OUT/table.md and OUT/<task>.svg (with gnuplot when it is installed, else a small SVG written
directly); no third-party Python modules.
"""

import argparse
import csv
import glob
import os
import shutil
import statistics
import subprocess
import sys

MEMBERS = ["linear", "gla", "ssd", "gdn", "kda"]
COLORS = {"linear": "#1f77b4", "gla": "#ff7f0e", "ssd": "#2ca02c", "gdn": "#d62728", "kda": "#9467bd"}
# reference run name -> (its form, its line style in the plots: gnuplot dt, SVG stroke-dasharray)
REFERENCES = {"reference-chunked": ("chunked", 2, "5,3"), "reference-recurrent": ("recurrent", 3, "1.5,2.5"),
              "reference": ("recurrent", 3, "1.5,2.5")}


def load(out):
    """{(task, member, run): {"loss": [str], "acc": [float], "ms": [float]}}"""
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "*_*_*.csv"))):
        task, member, run = os.path.basename(path)[:-4].split("_", 2)
        with open(path) as f:
            rows = list(csv.DictReader(f))
        runs[(task, member, run)] = {"loss": [r["loss"] for r in rows], "acc": [float(r["accuracy"]) for r in rows],
                                     "ms": [float(r["ms"]) for r in rows]}
    return runs


def final(xs, w):
    tail = [float(x) for x in xs[-w:]] if xs else []
    return sum(tail) / len(tail) if tail else float("nan")


def median_ms(ms):
    body = ms[10:] if len(ms) > 20 else ms
    return statistics.median(body) if body else float("nan")


def table(runs, w):
    """The markdown table and whether every group of libgdn runs was bitwise identical (None
    when no member had two)."""
    lines = ["| task | member | final loss libgdn | final loss reference | rel. diff | abs. diff | "
             "mean loss of the run, rel. diff | final acc libgdn | "
             "final acc reference | diff (points) | libgdn runs bitwise identical | ms/step libgdn | "
             "ms/step reference | steps | reference |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    all_same = None
    tasks = sorted({k[0] for k in runs})
    for task in tasks:
        for m in [m for m in MEMBERS if any(k[:2] == (task, m) for k in runs)]:
            lib = runs.get((task, m, "libgdn"))
            refs = [(REFERENCES[n][0], runs[(task, m, n)]) for n in REFERENCES if (task, m, n) in runs] or [("-", None)]
            reps = [v for k, v in sorted(runs.items()) if k[:2] == (task, m) and k[2].startswith("libgdn")]
            if len(reps) >= 2:
                same = all(r["loss"] == reps[0]["loss"] for r in reps[1:])
                all_same = same if all_same is None else (all_same and same)
                ident = "yes (%d runs)" % len(reps) if same else "**NO**"
            else:
                ident = "-"
            fl = final(lib["loss"], w) if lib else float("nan")
            al = final(lib["acc"], w) if lib else float("nan")
            for form, ref in refs:
                fr = final(ref["loss"], w) if ref else float("nan")
                ar = final(ref["acc"], w) if ref else float("nan")
                rel = (fl - fr) / fr * 100 if lib and ref and fr else float("nan")
                steps = min([len(r["loss"]) for r in reps + [lib, ref] if r] or [0])
                # the whole curve, not only its end: near-zero final losses (a solved MQAR) differ
                # relatively by noise, the area under the curve by when and how fast each learned
                ml, mr = (final(x["loss"], steps) if x else float("nan") for x in (lib, ref))
                mrel = (ml - mr) / mr * 100 if lib and ref and mr else float("nan")
                row = ("| %s | %s | %.4g | %.4g | %+.2f%% | %.2g | %+.2f%% | %.3f | %.3f | %+.1f | %s | %.1f | %.1f | "
                       "%d | %s |")
                lines.append(row % (task, m, fl, fr, rel, fl - fr, mrel, al, ar, (al - ar) * 100, ident,
                                    median_ms(lib["ms"]) if lib else float("nan"),
                                    median_ms(ref["ms"]) if ref else float("nan"), steps, form))
    return "\n".join(lines) + "\n", all_same


def smooth(ys, n=20):
    out, acc = [], 0.0
    for i, y in enumerate(ys):
        acc += y
        if i >= n:
            acc -= ys[i - n]
        out.append(acc / min(i + 1, n))
    return out


def curves(runs, task):
    """[(label, color, style, [(step, smoothed loss)])] for the first libgdn run (style None: solid)
    and each reference (style: REFERENCES' (dt, dasharray))."""
    out = []
    for m in MEMBERS:
        for run in ["libgdn"] + list(REFERENCES):
            r = runs.get((task, m, run))
            if r and r["loss"]:
                ys = smooth([float(x) for x in r["loss"]])
                style = REFERENCES[run][1:] if run in REFERENCES else None
                label = "%s %s" % (m, "reference " + REFERENCES[run][0] if run in REFERENCES else run)
                out.append((label, COLORS[m], style, list(enumerate(ys))))
    return out


TITLE = "%s: training loss (moving mean of 20 steps); solid libgdn, dashed reference chunked, dotted recurrent"


def svg_gnuplot(path, task, cs):
    dat = path + ".dat"
    with open(dat, "w") as f:
        for _, _, _, pts in cs:
            f.write("".join("%d %.6g\n" % p for p in pts) + "\n\n")
    plots = ", ".join("'%s' index %d with lines lw 1.5 lc rgb '%s' dt %d title '%s'" % (
        dat, i, c, d[0] if d else 1, lab) for i, (lab, c, d, _) in enumerate(cs))
    ys = [p[1] for _, _, _, pts in cs for p in pts]
    # losses over decades (a solved MQAR goes to 1e-5): a log axis shows the end of the curves too
    log = "set logscale y\n" if min(ys) > 0 and max(ys) / min(ys) > 1e3 else ""
    script = ("set terminal svg size 840,480 font 'sans,11'\nset output '%s'\nset title '%s'\nset xlabel 'step'\n"
              "set ylabel 'loss'\n%sset key outside right\nset grid\nplot %s\n" % (path, TITLE % task, log, plots))
    subprocess.run(["gnuplot"], input=script.encode(), check=True)
    os.remove(dat)


def svg_direct(path, task, cs):
    W, Hh, l, r, t, b = 840, 480, 60, 210, 30, 40
    xs = [p[0] for _, _, _, pts in cs for p in pts]
    ys = [p[1] for _, _, _, pts in cs for p in pts]
    x0, x1 = min(xs), max(max(xs), 1)
    y0, y1 = min(ys), max(ys)
    if y1 <= y0:
        y1 = y0 + 1
    X = lambda x: l + (x - x0) / max(x1 - x0, 1) * (W - l - r)  # noqa: E731
    Y = lambda y: Hh - b - (y - y0) / (y1 - y0) * (Hh - t - b)  # noqa: E731
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
         % (W, Hh), '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="18">%s</text>' % (l, TITLE % task),
         '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (l, t, W - l - r, Hh - t - b)]
    for i in range(6):
        yv, xv = y0 + (y1 - y0) * i / 5, x0 + (x1 - x0) * i / 5
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.3g</text>' % (l - 4, Y(yv) + 4, yv))
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(xv), Hh - b + 14, xv))
    o.append('<text x="%d" y="%d" text-anchor="middle">step</text>' % ((W - r + l) // 2, Hh - 6))
    for i, (lab, c, d, pts) in enumerate(cs):
        step = max(1, len(pts) // 400)
        pp = " ".join("%.1f,%.1f" % (X(x), Y(y)) for x, y in pts[::step] + pts[-1:])
        o.append('<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>' % (
            c, ' stroke-dasharray="%s"' % d[1] if d else "", pp))
        ly = t + 14 + 16 * i
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"%s/>' % (
            W - r + 10, ly - 4, W - r + 35, ly - 4, c, ' stroke-dasharray="%s"' % d[1] if d else ""))
        o.append('<text x="%d" y="%d">%s</text>' % (W - r + 40, ly, lab))
    o.append("</svg>\n")
    with open(path, "w") as f:
        f.write("\n".join(o))


def report(out, final_window=100, plot="auto"):
    runs = load(out)
    if not runs:
        print("train_report: no <task>_<member>_<run>.csv in %s" % out)
        return None
    text, same = table(runs, final_window)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    print(text, end="")
    use_gnuplot = plot == "gnuplot" or (plot == "auto" and shutil.which("gnuplot"))
    for task in sorted({k[0] for k in runs}):
        path = os.path.join(out, task + ".svg")
        cs = curves(runs, task)
        if not cs:
            print("plot: none for %s (no run has a step)" % task)
            continue
        (svg_gnuplot if use_gnuplot else svg_direct)(path, task, cs)
        print("plot: %s (%s)" % (path, "gnuplot" if use_gnuplot else "direct SVG"))
    if same is not None:
        print("libgdn runs bitwise identical: %s" % ("all" if same else "NOT ALL"))
    return same


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="gdn/train.py's CSVs into a table and plots")
    ap.add_argument("out")
    ap.add_argument("--final-window", type=int, default=100)
    ap.add_argument("--plot", choices=["auto", "gnuplot", "direct"], default="auto")
    a = ap.parse_args()
    s = report(a.out, a.final_window, a.plot)
    sys.exit(1 if s is False or s is None else 0)
