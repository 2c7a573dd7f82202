# gdn/local.mk: the gated-linear-recurrence family (included by the top Makefile.am).
# libgdn_oracle: fp64 oracle (+ analytic backward) and the host chunked specification;
# linked into libkgate so the gdn ops are built in.
noinst_LTLIBRARIES = libgdn_oracle.la
libgdn_oracle_la_SOURCES = gdn/oracle.c gdn/oracle.h \
	gdn/chunk_host.c gdn/chunk_host.h gdn/chunk_host_impl.h
EXTRA_DIST += gdn/README.md
