#ifndef KGATE_STDDEF_H
#define KGATE_STDDEF_H
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#define offsetof(type, member) ((size_t)&reinterpret_cast<const volatile char &>(((type *)0)->member))
#endif
#endif
