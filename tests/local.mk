# tests/local.mk: unit tests (cmocka) and end-to-end tests of the real binary.
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	KGATE='$(abs_top_builddir)/kgate'; KGATE_CACHE_DIR='$(abs_top_builddir)/tests/cache'; \
	export top_srcdir top_builddir KGATE KGATE_CACHE_DIR;
