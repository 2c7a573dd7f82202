# embed.awk: turns text files into C string literals at build time.
#   awk -v mode=header -v var=kg_kgate_h -f embed.awk src/kgate.h  -> const char kg_kgate_h[] = "...";
#   awk -v mode=builtins -f embed.awk a.c b.cu ...    -> const struct kg_builtin kg_builtins[]
#       (each file's `// builtin: ONE LINE` is its summary; a file without one fails the build)
#   awk -v mode=files -v var=kg_x -f embed.awk d/a.h d/b ...  -> kg_x_names[] = {"a.h", "b", 0},
#       kg_x_text[] (each file's text, in the same order), kg_x_count. A file is named by its
#       base name (with -v keepdir=1 by its folder and base name, "03-nonfinite/max_rows.c", as
#       the lab's lessons are); an empty file has no line to read and is left out, so none may be
#       empty.
# Every line gets its "\n" back, the last one included: a file embeds byte for byte only when
# it ends with a newline.
# A built-in is one self-contained source: in mode builtins, a line `#include "REL"` whose REL
# names a readable file relative to the including file's directory is replaced by that file's
# text (recursively), between two comment lines that name it relative to -v top=DIR. A file
# with an include guard is inlined once (a later include of it becomes a comment); one without
# (gdn/chunk_host_impl.h, instantiated twice) every time. `#include <...>` and names that do not
# resolve stay as they are.
function quote(s) {
    gsub(/\\/, "\\\\", s)
    gsub(/"/, "\\\"", s)
    return "\"" s "\\n\""
}
function dirname(p) {
    if (p !~ /\//) return "."
    sub(/\/[^\/]*$/, "", p)
    return p
}
function included_name(line,    name) {
    name = line
    sub(/^[^"]*"/, "", name)
    sub(/".*$/, "", name)
    return name
}
# The file an include line names, relative to the directory of `from`, or "" (not an include
# of a quoted name, or no such file).
function resolve(line, from,    path, probe) {
    if (line !~ /^[ \t]*#[ \t]*include[ \t]*"[^"]+"/) return ""
    path = dirname(from) "/" included_name(line)
    while (sub(/\/\.\//, "/", path)) { }
    while (sub(/\/[^\/.][^\/]*\/\.\.\//, "/", path)) { }
    if ((getline probe < path) < 0) return ""
    close(path)
    return path
}
# Whether the first preprocessor line of a file is an #ifndef (an include guard).
function guarded(path,    line, g) {
    g = 0
    while ((getline line < path) > 0)
        if (line ~ /^[ \t]*#/) { g = line ~ /^[ \t]*#[ \t]*ifndef/; break }
    close(path)
    return g
}
function shown(path,    p) {
    p = path
    if (top != "" && index(p, top "/") == 1) p = substr(p, length(top) + 2)
    return p
}
function inline(path, depth,    line, sub_path) {
    if (depth > 16) { print "embed.awk: includes nested too deep at " path > "/dev/stderr"; exit 1 }
    if (path in once) { print "     " quote("/* " shown(path) ": inlined above */"); return }
    if (guarded(path)) once[path] = 1
    print "     " quote("/* ---- begin " shown(path) ", inlined at build time ---- */")
    while ((getline line < path) > 0) {
        sub_path = resolve(line, path)
        if (sub_path != "") inline(sub_path, depth + 1)
        else print "     " quote(line)
    }
    close(path)
    print "     " quote("/* ---- end " shown(path) " ---- */")
}
BEGIN {
    if (mode == "header") print "const char " var "[] ="
    else if (mode == "builtins") { print "#include \"contract/builtin.h\""; print "const struct kg_builtin kg_builtins[] = {" }
}
# The summary closes the entry, after the source: it is known only once the file is read.
function end_builtin() {
    if (summary == "") { print "embed.awk: " f ": no '// builtin: SUMMARY' line" > "/dev/stderr"; exit 1 }
    print "     ,"
    print "     " substr(quote(summary), 1, length(quote(summary)) - 3) "\""
    print "    },"
}
mode == "builtins" && FNR == 1 {
    if (NR > 1) end_builtin()
    f = FILENAME; sub(/.*\//, "", f)
    b = f; sub(/\.[^.]*$/, "", b)
    summary = ""
    delete once
    print "    {\"" b "\", \"" f "\","
}
mode == "builtins" && /^\/\/ builtin: / && summary == "" {
    summary = $0
    sub(/^\/\/ builtin: */, "", summary)
}
# files: collected, since the names come out before the texts
mode == "files" {
    if (FNR == 1) {
        nf++; fname[nf] = FILENAME; ftext[nf] = ""
        if (keepdir) { np = split(FILENAME, part, "/"); fname[nf] = part[np - 1] "/" part[np] }
        else sub(/.*\//, "", fname[nf])
    }
    ftext[nf] = ftext[nf] "\n     " quote($0)
    next
}
mode == "builtins" {
    inc = resolve($0, FILENAME)
    if (inc != "") inline(inc, 1)
    else print "     " quote($0)
    next
}
{ print "     " quote($0) }
END {
    if (mode == "header") print "    ;"
    else if (mode == "builtins") { end_builtin(); print "    {0, 0, 0, 0},"; print "};" }
    else if (mode == "files") {
        print "const char *const " var "_names[] = {"
        for (i = 1; i <= nf; i++) print "    \"" fname[i] "\","
        print "    0,"
        print "};"
        print "const char *const " var "_text[] = {"
        for (i = 1; i <= nf; i++) print "    /* " fname[i] " */" ftext[i] ","
        print "    0,"
        print "};"
        print "const int " var "_count = " nf ";"
    }
}
