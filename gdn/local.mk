# gdn/local.mk: the gated-linear-recurrence family (included by the top Makefile.am).
# libgdn_oracle: fp64 oracle (+ analytic backward) and the host chunked specification;
# linked into libkgate so the gdn ops are built in.
noinst_LTLIBRARIES = libgdn_oracle.la
libgdn_oracle_la_SOURCES = gdn/oracle.c gdn/oracle.h \
	gdn/chunk_host.c gdn/chunk_host.h gdn/chunk_host_impl.h
EXTRA_DIST += gdn/README.md

# libgdn_host.so: the same oracle and host chunked algorithm as a shared library of their own
# (plain C, no nvcc), for the PyTorch binding gdn/python/kgate_gdn to load with ctypes: CPU
# tensors go to gdn_chunk_{fwd,bwd}_{f32,f64}, and the tests compare against gdn_oracle_*. It
# lands in gdn/.libs/ of the build tree and is installed as $(pkglibdir)/libgdn_host.so.
pkglib_LTLIBRARIES = gdn/libgdn_host.la
gdn_libgdn_host_la_SOURCES = gdn/oracle.c gdn/oracle.h gdn/chunk_host.c gdn/chunk_host.h gdn/chunk_host_impl.h
# built without the sanitizers even in a sanitizer build: python3 loads it, and a library that
# needs ASan's runtime cannot be loaded into a process that did not start with it
gdn_libgdn_host_la_CFLAGS = -std=gnu11 -ffp-contract=off $(WARN_CFLAGS)
gdn_libgdn_host_la_LDFLAGS = -module -avoid-version -shared
gdn_libgdn_host_la_LIBADD = -lm

# kgate_gdn, the PyTorch binding (importable with PYTHONPATH=gdn/python, no build step of its
# own), the training run of the five members (gdn/train.py, gdn/train_report.py) and their tests:
# on the CPU through libgdn_host.so, on the GPU through libgdn.so (SKIP without one).
GDN_PY_FILES = gdn/python/kgate_gdn/__init__.py gdn/python/kgate_gdn/_lib.py gdn/python/kgate_gdn/ops.py \
	gdn/python/kgate_gdn/reference.py gdn/train.py gdn/train_report.py
EXTRA_DIST += $(GDN_PY_FILES) gdn/train_mqar.svg gdn/train_markov.svg gdn/train_mqar_gla4000.svg tests/gdn_torch.py tests/gdn_torch.sh tests/gpu/gdn_torch_cuda.sh tests/gdn_train.sh
TESTS += tests/gdn_torch.sh tests/gdn_train.sh tests/gpu/gdn_torch_cuda.sh

# The chunk-parallel tensor-core kernels (gdn/chunk_fwd_tc.cuh, _gla_tc.cuh, _gdn_tc.cuh) on the
# CPU: tests/tc_emu.sh builds gdn/tc_emu_check.cc with g++ on the emulation gdn/tc_emu.h (no nvcc;
# SKIP without g++) and runs it against the oracle, under the sanitizers, and with eight planted
# bugs that must fail.
TESTS += tests/tc_emu.sh
EXTRA_DIST += tests/tc_emu.sh gdn/tc_emu.h gdn/tc_emu_check.cc

# ---- the CUDA kernels --------------------------------------------------------------------
# The kernel bodies (glr_*.cuh) with the kgate contract files that judge them, the host
# emulation check (a manual tool: see the header of gdn/glr_emu_check.cc) and the GPU script.
GDN_CUDA_HDRS = gdn/glr_common.cuh gdn/glr_fwd.cuh gdn/glr_bwd.cuh gdn/libgdn_impl.cuh gdn/libgdn.h \
	gdn/chunk_fwd_tc.cuh gdn/chunk_fwd_gdn_tc.cuh gdn/chunk_fwd_gla_tc.cuh gdn/chunk_bwd_tc.cuh \
	gdn/chunk_bwd_gla_tc.cuh gdn/chunk_bwd_gdn_tc.cuh gdn/chunk_bwd_kda_tc.cuh
GDN_CONTRACTS = gdn/linear_attn_fwd.cu gdn/linear_attn_bwd.cu gdn/gla_fwd.cu gdn/gla_bwd.cu \
	gdn/ssd_fwd.cu gdn/ssd_bwd.cu gdn/gdn_fwd.cu gdn/gdn_bwd.cu gdn/kda_fwd.cu gdn/kda_bwd.cu
EXTRA_DIST += $(GDN_CUDA_HDRS) $(GDN_CONTRACTS) gdn/libgdn.cu gdn/libgdn_linear.cu gdn/libgdn_gla.cu \
	gdn/libgdn_ssd.cu gdn/libgdn_gdn.cu gdn/libgdn_kda.cu gdn/libgdn_tc.cu gdn/bench_gdn.cu gdn/glr_emu.h \
	gdn/glr_emu_check.cc gdn/run_gpu_checks.sh tests/gpu/test_gdn_cuda.cu tests/gpu/test_gdn_tc.cu gdn/testutil.h \
	gdn/gla_passes.cu gdn/tc_hash.cu gdn/ab/pack.sh gdn/ab/run.sh

if HAVE_NVCC
# libgdn.so: nvcc objects in the build tree, one per member so that `make -j` compiles them in
# parallel, linked with the CUDA runtime static (the library needs no CUDA install to load).
# sm_90a only (H100/H200); every file includes the kernel headers, hence the blanket deps.
GDN_NVCC_FLAGS = -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -fPIC -I$(top_srcdir)/gdn
GDN_DEPS = $(GDN_CUDA_HDRS:%=$(top_srcdir)/%) $(top_srcdir)/gdn/oracle.h $(top_srcdir)/gdn/testutil.h
GDN_LIB_OBJS = gdn/libgdn.o gdn/libgdn_linear.o gdn/libgdn_gla.o gdn/libgdn_ssd.o gdn/libgdn_gdn.o \
	gdn/libgdn_kda.o gdn/libgdn_tc.o

# One suffix rule for every nvcc object (the library's, the GPU test's, the benchmark's).
SUFFIXES += .cu .o
.cu.o:
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(NVCC) $(GDN_NVCC_FLAGS) -c -o $@ $<
$(GDN_LIB_OBJS) tests/gpu/test_gdn_cuda.o tests/gpu/test_gdn_tc.o gdn/bench_gdn.o gdn/tc_hash.o: $(GDN_DEPS)
tests/gpu/test_gdn_cuda.o: $(top_srcdir)/gdn/chunk_host.h
gdn/libgdn.so: $(GDN_LIB_OBJS)
	$(AM_V_GEN)$(NVCC) -shared -cudart static -gencode=arch=compute_90a,code=sm_90a -o $@ $(GDN_LIB_OBJS)

# Built by `make` only with GDN_IN_ALL (configure saw a GPU, or --enable-gdn): elsewhere their
# nvcc compiles would be most of the build for programs that cannot run there, so `make gdn`
# builds them on demand (and `make bench` what it needs). With GDN_IN_ALL, `make check` runs the
# GPU test and `make install` installs $(libdir)/libgdn.so with its header (and oracle.h, which it
# includes) under $(pkgincludedir). SCRIPTS (mode 755, not distributed) rather than an install
# hook, so no other fragment's install-*-local can collide with this one.
GDN_GPU_PROGS = gdn/libgdn.so tests/gpu/test_gdn_cuda tests/gpu/test_gdn_tc gdn/bench_gdn gdn/tc_hash
gdn: $(GDN_GPU_PROGS)
if GDN_IN_ALL
gdnlibdir = $(libdir)
gdnlib_SCRIPTS = gdn/libgdn.so
gdnincludedir = $(pkgincludedir)
gdninclude_HEADERS = gdn/libgdn.h gdn/oracle.h
noinst_SCRIPTS = tests/gpu/test_gdn_cuda tests/gpu/test_gdn_tc gdn/bench_gdn
TESTS += tests/gpu/test_gdn_cuda tests/gpu/test_gdn_tc
endif

# The oracle and the host chunked algorithm as plain C objects for the nvcc-linked programs.
gdn/gpu_oracle.o: $(top_srcdir)/gdn/oracle.c $(top_srcdir)/gdn/oracle.h
	$(AM_V_CC)$(MKDIR_P) gdn && $(CC) -std=gnu11 $(CFLAGS) -I$(top_srcdir)/gdn -c -o $@ $(top_srcdir)/gdn/oracle.c
gdn/gpu_chunk_host.o: $(top_srcdir)/gdn/chunk_host.c $(top_srcdir)/gdn/chunk_host_impl.h \
		$(top_srcdir)/gdn/chunk_host.h $(top_srcdir)/gdn/oracle.h
	$(AM_V_CC)$(MKDIR_P) gdn && $(CC) -std=gnu11 $(CFLAGS) -I$(top_srcdir)/gdn -c -o $@ \
		$(top_srcdir)/gdn/chunk_host.c

# The GPU test (exits 77 = SKIP without an sm_90 GPU) and the benchmark. They find libgdn.so
# through an $ORIGIN-relative rpath, so the build tree can be copied to a GPU host as it is.
tests/gpu/test_gdn_cuda: tests/gpu/test_gdn_cuda.o gdn/gpu_oracle.o gdn/gpu_chunk_host.o gdn/libgdn.so
	$(AM_V_GEN)$(NVCC) -o $@ tests/gpu/test_gdn_cuda.o gdn/gpu_oracle.o gdn/gpu_chunk_host.o \
		-Lgdn -lgdn -Xlinker -rpath='$$ORIGIN/../../gdn' -lpthread -lm
tests/gpu/test_gdn_tc: tests/gpu/test_gdn_tc.o gdn/gpu_oracle.o gdn/libgdn.so
	$(AM_V_GEN)$(NVCC) -o $@ tests/gpu/test_gdn_tc.o gdn/gpu_oracle.o -Lgdn -lgdn -Xlinker -rpath='$$ORIGIN/../../gdn' -lm
gdn/bench_gdn: gdn/bench_gdn.o gdn/gpu_oracle.o gdn/libgdn.so
	$(AM_V_GEN)$(NVCC) -o $@ gdn/bench_gdn.o gdn/gpu_oracle.o -Lgdn -lgdn -lcublas \
		-Xlinker -rpath='$$ORIGIN' -Xlinker -rpath=$(dir $(NVCC))../lib64 -lm
# A tool, not a test: hashes of the chunk-parallel kernels' outputs, to compare two libgdn.so builds
gdn/tc_hash: gdn/tc_hash.o gdn/gpu_oracle.o gdn/libgdn.so
	$(AM_V_GEN)$(NVCC) -o $@ gdn/tc_hash.o gdn/gpu_oracle.o -Lgdn -lgdn -Xlinker -rpath='$$ORIGIN' -lm

# Run by `make check` (GDN_IN_ALL), `make bench-gdn` and gdn/run_gpu_checks.sh (a build tree
# carried to a GPU host: `make gdn` first).
CLEANFILES += $(GDN_LIB_OBJS) gdn/libgdn.so gdn/gpu_oracle.o gdn/gpu_chunk_host.o tests/gpu/test_gdn_cuda.o \
	tests/gpu/test_gdn_cuda tests/gpu/test_gdn_tc.o tests/gpu/test_gdn_tc gdn/bench_gdn.o gdn/bench_gdn \
	gdn/tc_hash.o gdn/tc_hash

bench-gdn: gdn/bench_gdn
	gdn/bench_gdn
else
bench-gdn gdn:
	@echo "$@: configure found no nvcc (or no CUDA headers): nothing built"; exit 1
endif
bench: bench-gdn
.PHONY: bench bench-gdn gdn
