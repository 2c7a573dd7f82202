#ifndef KGATE_MATH_H
#define KGATE_MATH_H
#if defined(__has_builtin)
#if __has_builtin(__builtin_bit_cast)
#define KGATE_BITS_F32(u) __builtin_bit_cast(float, (unsigned int)(u))
#define KGATE_BITS_F64(u) __builtin_bit_cast(double, (unsigned long long)(u))
#endif
#endif
#ifndef KGATE_BITS_F32
#define KGATE_BITS_F32(u) __int_as_float((int)(u))
#define KGATE_BITS_F64(u) __longlong_as_double((long long)(u))
#endif
#ifndef INFINITY
#define INFINITY KGATE_BITS_F32(0x7f800000u)
#endif
#ifndef NAN
#define NAN KGATE_BITS_F32(0x7fc00000u)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF KGATE_BITS_F32(0x7f800000u)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL KGATE_BITS_F64(0x7ff0000000000000ull)
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
#endif
