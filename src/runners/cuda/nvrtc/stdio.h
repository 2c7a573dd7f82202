#ifndef KGATE_STDIO_H
#define KGATE_STDIO_H
extern "C" __device__ int printf(const char *, ...);
#endif
