# tests/local.mk: unit tests (cmocka), end-to-end tests of the real binary, and every kernel in
# testdata/ as a test of its own (tests/control.sh reads the file's `// expect:` line).
TEST_EXTENSIONS = .sh .c .cu
SH_LOG_COMPILER = $(SHELL)
C_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/control.sh
CU_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/control.sh
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	KGATE='$(abs_top_builddir)/kgate'; KGATE_CACHE_DIR='$(abs_top_builddir)/tests/cache'; \
	export top_srcdir top_builddir KGATE KGATE_CACHE_DIR;
if ENABLE_ASAN
# the sanitizer build: a leak (LeakSanitizer at exit) or undefined behaviour fails the test that
# met it; a value the caller set wins
AM_TESTS_ENVIRONMENT += \
	ASAN_OPTIONS="$${ASAN_OPTIONS:-detect_leaks=1}"; UBSAN_OPTIONS="$${UBSAN_OPTIONS:-print_stacktrace=1}"; \
	export ASAN_OPTIONS UBSAN_OPTIONS;
endif

CONTROLS = \
	testdata/builtin/softmax_rows.c \
	testdata/builtin/softmax_rows_cuda.cu \
	testdata/builtin/glr/linear_attn_fwd.c \
	testdata/builtin/glr/linear_attn_bwd.c \
	testdata/builtin/glr/gla_fwd.c \
	testdata/builtin/glr/gla_bwd.c \
	testdata/builtin/glr/ssd_fwd.c \
	testdata/builtin/glr/ssd_bwd.c \
	testdata/builtin/glr/gdn_fwd.c \
	testdata/builtin/glr/gdn_bwd.c \
	testdata/builtin/glr/kda_fwd.c \
	testdata/builtin/glr/kda_bwd.c \
	testdata/ok/add_f16.c \
	testdata/ok/argmax.c \
	testdata/ok/causal_attention.c \
	testdata/ok/cumsum.c \
	testdata/ok/gdn_recurrent.c \
	testdata/ok/gelu.c \
	testdata/ok/gelu_bf16.cu \
	testdata/ok/inplace_relu.c \
	testdata/ok/layernorm.c \
	testdata/ok/layernorm_cuda.cu \
	testdata/ok/log_softmax.c \
	testdata/ok/matmul.c \
	testdata/ok/matmul_tiled.cu \
	testdata/ok/matmul_tf32_allowed.c \
	testdata/ok/prod_rows.c \
	testdata/ok/relu.c \
	testdata/ok/relu_own_kg_now.c \
	testdata/ok/relu_cuda.cu \
	testdata/ok/rmsnorm.c \
	testdata/ok/scale_multi.c \
	testdata/ok/sum_rows.c \
	testdata/ok/sum_rows_cuda.cu \
	testdata/ok/transpose_refuses.c \
	testdata/bugs/add_vec8_drops_tail.c \
	testdata/bugs/gelu_memo_first_call.c \
	testdata/bugs/gelu_tanh_as_erf.c \
	testdata/bugs/layernorm_one_pass_variance.c \
	testdata/bugs/log_softmax_via_log.c \
	testdata/bugs/matmul_tf32_like.c \
	testdata/bugs/matmul_transposed_index.c \
	testdata/bugs/max_skips_nan.c \
	testdata/bugs/relu_accumulates_into_output.c \
	testdata/bugs/relu_block_is_n.cu \
	testdata/bugs/relu_fmaxf.c \
	testdata/bugs/relu_fmaxf_cuda.cu \
	testdata/bugs/relu_hangs.c \
	testdata/bugs/relu_no_tail_check.cu \
	testdata/bugs/relu_segfault.c \
	testdata/bugs/relu_skips_last.c \
	testdata/bugs/relu_vec4_tail.c \
	testdata/bugs/rmsnorm_fast_rsqrt.c \
	testdata/bugs/tanh_via_exp_cancels.c \
	testdata/bugs/relu_writes_one_past.c \
	testdata/bugs/rows_on_grid_y.cu \
	testdata/bugs/softmax_cache_by_pointer.c \
	testdata/bugs/softmax_global_scratch.cu \
	testdata/bugs/softmax_hardcoded_n.c \
	testdata/bugs/softmax_no_max.c \
	testdata/bugs/softmax_reads_one_past.c \
	testdata/bugs/softmax_scratch_input.c \
	testdata/bugs/sum_accumulates_into_output.c \
	testdata/bugs/sum_atomicadd.cu \
	testdata/bugs/sum_drops_rows.c \
	testdata/bugs/sum_fp16_accumulator.c \
	testdata/bugs/sum_global_partials.cu \
	testdata/bugs/sum_half_accumulator.cu \
	testdata/bugs/sum_process_order.c \
	testdata/bugs/sum_rotating_order.c \
	testdata/bugs/sum_threads_race.c \
	testdata/malformed/arg_count.c \
	testdata/malformed/arg_name.c \
	testdata/malformed/args_commas.c \
	testdata/malformed/bad_dtype.c \
	testdata/malformed/compile_error.c \
	testdata/malformed/inputs_not_finite.c \
	testdata/malformed/later_dim_undefined.c \
	testdata/malformed/missing_entry.c \
	testdata/malformed/no_contract.c \
	testdata/malformed/no_kgate_h.c \
	testdata/malformed/no_kgate_h_call.c \
	testdata/malformed/op_expression.c \
	testdata/malformed/op_positional.c \
	testdata/malformed/op_shapes.c \
	testdata/malformed/scalar_kind_mismatch.c \
	testdata/malformed/scalar_no_symbol.c \
	testdata/malformed/scalar_type_int32.c \
	testdata/malformed/shape_overflows_int.c \
	testdata/malformed/unclosed.c \
	testdata/malformed/undefined_dim_symbol.c \
	testdata/malformed/undefined_launch_symbol.cu \
	testdata/malformed/unknown_key.c \
	testdata/malformed/unknown_op.c \
	testdata/malformed/unused_symbol.c \
	$(empty)
TESTS += tests/cli.sh tests/cache_race.sh tests/seq_reference.sh tests/pyc_cache.sh tests/describe_meta.sh tests/model_key.sh tests/cuda_describe.sh tests/builtin_glr_cuda.sh tests/cli_messages.sh tests/tui_repl.sh tests/repl_exit.sh tests/lab.sh tests/fuzz.sh tests/special_files.sh tests/repl_interrupt.sh tests/repl_limits.sh tests/tui_tmux.sh tests/proto_layout.sh tests/resident.sh tests/conditioning.sh tests/lean_case.sh tests/digest.sh tests/standard_beside.sh tests/device_wait.sh tests/worker_held.sh tests/limits_pace.sh tests/kernelbench.sh tests/sandbox.sh \
	tests/audit_store.sh tests/audit_order.sh tests/audit_gpus.sh tests/audit_devmem.sh tests/audit_devlearn.sh tests/audit_oom.sh tests/report_tf32.sh tests/layers.sh tests/test_names.sh tests/format.sh tests/hostile.sh tests/memo.sh \
	$(CONTROLS)
EXTRA_DIST += tests/cli.sh tests/cache_race.sh tests/seq_reference.sh tests/pyc_cache.sh tests/describe_meta.sh tests/model_key.sh tests/cuda_describe.sh tests/builtin_glr_cuda.sh tests/cli_messages.sh tests/tui_repl.sh tests/repl_exit.sh tests/lab.sh tests/special_files.sh tests/repl_interrupt.sh tests/repl_limits.sh tests/tui_tmux.sh tests/proto_layout.sh tests/resident.sh tests/conditioning.sh tests/lean_case.sh tests/digest.sh tests/standard_beside.sh tests/device_wait.sh tests/worker_held.sh tests/limits_pace.sh tests/kernelbench.sh tests/control.sh \
	tests/repl_lib.sh tests/audit_store.sh tests/audit_order.sh tests/audit_gpus.sh tests/audit_devmem.sh tests/audit_devlearn.sh tests/audit_oom.sh tests/report_tf32.sh tests/layers.sh tests/report_snapshot.sh tests/test_names.sh tests/format.sh tests/hostile.sh tests/memo.sh \
	testdata/hostile \
	tests/sandbox.sh testdata/sandbox/peek_judge_relu.c testdata/sandbox/peek_judge_relu.py $(CONTROLS) \
	testdata/kernelbench tests/fuzz.sh tests/fuzz/README tests/fuzz/fuzz_contract.c tests/fuzz/corpus.sh \
	tests/fuzz/contract.dict tests/fuzz/regressions

# the full-screen inspector's keys, wrapping and heatmap labels (tmux; tmux_lib.sh is shared)
TESTS += tests/tui_tmux_keys.sh
EXTRA_DIST += tests/tui_tmux_keys.sh tests/tmux_lib.sh tests/tmux_screen.sh tests/torch_python.sh

if HAVE_CMOCKA
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
UNIT_LIBS = libkgate.la $(CMOCKA_LIBS) -lm
check_PROGRAMS += tests/unit/test_core tests/unit/test_contract tests/unit/test_oracle \
	tests/unit/test_gdn_oracle tests/unit/test_gdn_chunk tests/unit/test_inspect
TESTS += tests/unit/test_core tests/unit/test_contract tests/unit/test_oracle \
	tests/unit/test_gdn_oracle tests/unit/test_gdn_chunk tests/unit/test_inspect
tests_unit_test_core_SOURCES = tests/unit/test_core.c
tests_unit_test_core_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_core_LDADD = $(UNIT_LIBS)
tests_unit_test_contract_SOURCES = tests/unit/test_contract.c
tests_unit_test_contract_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_contract_LDADD = $(UNIT_LIBS)
tests_unit_test_oracle_SOURCES = tests/unit/test_oracle.c
tests_unit_test_oracle_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_oracle_LDADD = $(UNIT_LIBS)
tests_unit_test_inspect_SOURCES = tests/unit/test_inspect.c
tests_unit_test_inspect_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_inspect_LDADD = $(UNIT_LIBS)
tests_unit_test_gdn_oracle_SOURCES = tests/unit/test_gdn_oracle.c
tests_unit_test_gdn_oracle_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_gdn_oracle_LDADD = libgdn_oracle.la $(CMOCKA_LIBS) -lm
tests_unit_test_gdn_chunk_SOURCES = tests/unit/test_gdn_chunk.c
tests_unit_test_gdn_chunk_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_gdn_chunk_LDADD = libgdn_oracle.la $(CMOCKA_LIBS) -lm
endif

# testdata/kernelbench travels as a folder; what Python leaves in it does not
dist-hook:
	-rm -rf `find $(distdir)/testdata -name __pycache__`

clean-local: clean-test-cache clean-fuzz
clean-test-cache:
	-rm -rf tests/cache
# what tests/fuzz.sh builds and finds in the build tree (regressions/ is the source tree's)
clean-fuzz:
	-rm -rf tests/fuzz/fuzz_contract tests/fuzz/corpus tests/fuzz/*.log tests/fuzz/crash-* tests/fuzz/leak-* \
		tests/fuzz/timeout-* tests/fuzz/oom-* tests/fuzz/slow-unit-*
.PHONY: clean-test-cache clean-fuzz

# `make fuzz`: the contract parser's fuzzer for KG_FUZZ_SECONDS (default 600), tests/fuzz/README
fuzz:
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' KG_FUZZ_SECONDS=$${KG_FUZZ_SECONDS:-600} \
		$(SHELL) $(top_srcdir)/tests/fuzz.sh
.PHONY: fuzz
