# embed.awk: turns text files into C string literals at build time.
#   awk -v mode=header -v var=kg_kgate_h -f embed.awk src/kgate.h  -> const char kg_kgate_h[] = "...";
#   awk -v mode=builtins -f embed.awk a.c b.cu ...    -> const struct kg_builtin kg_builtins[]
function quote(s) {
    gsub(/\\/, "\\\\", s)
    gsub(/"/, "\\\"", s)
    return "\"" s "\\n\""
}
BEGIN {
    if (mode == "header") print "const char " var "[] ="
    else { print "#include \"contract/builtin.h\""; print "const struct kg_builtin kg_builtins[] = {" }
}
mode == "builtins" && FNR == 1 {
    if (NR > 1) print "    },"
    f = FILENAME; sub(/.*\//, "", f)
    b = f; sub(/\.[^.]*$/, "", b)
    print "    {\"" b "\", \"" f "\","
}
{ print "     " quote($0) }
END {
    if (mode == "header") print "    ;"
    else { print "    },"; print "    {0, 0, 0},"; print "};" }
}
