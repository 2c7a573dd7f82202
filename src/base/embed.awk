# embed.awk: turns text files into C string literals at build time.
#   awk -v mode=header -v var=kg_kgate_h -f embed.awk src/kgate.h  -> const char kg_kgate_h[] = "...";
#   awk -v mode=builtins -f embed.awk a.c b.cu ...    -> const struct kg_builtin kg_builtins[]
#   awk -v mode=files -v var=kg_x -f embed.awk d/a.h d/b ...  -> kg_x_names[] = {"a.h", "b", 0},
#       kg_x_text[] (each file's text, in the same order), kg_x_count. A file is named by its
#       base name (with -v keepdir=1 by its folder and base name, "03-nonfinite/max_rows.c", as
#       the lab's lessons are); an empty file has no line to read and is left out, so none may be
#       empty.
# Every line gets its "\n" back, the last one included: a file embeds byte for byte only when
# it ends with a newline.
function quote(s) {
    gsub(/\\/, "\\\\", s)
    gsub(/"/, "\\\"", s)
    return "\"" s "\\n\""
}
BEGIN {
    if (mode == "header") print "const char " var "[] ="
    else if (mode == "builtins") { print "#include \"contract/builtin.h\""; print "const struct kg_builtin kg_builtins[] = {" }
}
mode == "builtins" && FNR == 1 {
    if (NR > 1) print "    },"
    f = FILENAME; sub(/.*\//, "", f)
    b = f; sub(/\.[^.]*$/, "", b)
    print "    {\"" b "\", \"" f "\","
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
{ print "     " quote($0) }
END {
    if (mode == "header") print "    ;"
    else if (mode == "builtins") { print "    },"; print "    {0, 0, 0},"; print "};" }
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
