#ifdef NDEBUG
#undef assert
#define assert(e) ((void)0)
#endif
