# plant.awk: makes the lesson's chunk_host_impl.h from gdn/chunk_host_impl.h with the lesson's
# bug planted in the reverse state scan (stage 7): a chunk of one step, which the last chunk
# is when T % 64 == 1, passes the state gradient on unchanged. The fix is gdn/chunk_host_impl.h
# itself. Fails (and so fails the build) when the stage no longer has the line it expects.
/^static void SFX\(stage_bwd_dh\)/ { in_dh = 1 }
{ print }
in_dh && /L = chunk_len\(w->T, w->C, n\);$/ {
    print "        if (L == 1) { /* one step: nothing to scan inside the chunk */"
    print "            memcpy(w->dh + n * KV, w->dh + (n + 1) * KV, (size_t)KV * sizeof(real));"
    print "            continue;"
    print "        }"
    in_dh = 0; planted = 1
}
END { if (!planted) { print "plant.awk: no chunk_len line in stage_bwd_dh of " FILENAME > "/dev/stderr"; exit 1 } }
