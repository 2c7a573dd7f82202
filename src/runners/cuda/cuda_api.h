/* cuda_api.h: the CUDA driver and NVRTC functions the CUDA runner calls, as tables of
 * pointers filled by dlsym (nvtop style: nothing here is linked). cuda.h and nvrtc.h are
 * included for their types only; each pointer's type is the header's own prototype, taken
 * with __typeof__, so a signature cannot drift from the toolkit's. Where cuda.h maps a name
 * to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2), __typeof__ sees the versioned
 * prototype, and api.c asks dlsym for the versioned symbol by its full name. Needs
 * the cuda.h of CUDA 11.x or newer (checked with 13.0). */
#ifndef KG_CUDA_API_H
#define KG_CUDA_API_H

#include <cuda.h>
#include <nvrtc.h>

#define KG_FN(sym) __typeof__(&sym)

/* libcuda (the driver). Members marked optional may be NULL (older drivers). */
struct kg_cu_api {
    void *lib;
    char path[64]; /* the name that dlopen accepted */
    KG_FN(cuInit) Init;
    KG_FN(cuDriverGetVersion) DriverGetVersion;
    KG_FN(cuGetErrorName) GetErrorName;
    KG_FN(cuGetErrorString) GetErrorString;
    KG_FN(cuDeviceGetCount) DeviceGetCount;
    KG_FN(cuDeviceGet) DeviceGet;
    KG_FN(cuDeviceGetName) DeviceGetName;
    KG_FN(cuDeviceGetAttribute) DeviceGetAttribute;
    KG_FN(cuDeviceTotalMem) DeviceTotalMem;
    KG_FN(cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain;
    KG_FN(cuDevicePrimaryCtxRelease) DevicePrimaryCtxRelease;
    KG_FN(cuCtxSetCurrent) CtxSetCurrent;
    KG_FN(cuCtxSynchronize) CtxSynchronize;
    KG_FN(cuModuleLoadDataEx) ModuleLoadDataEx;
    KG_FN(cuModuleUnload) ModuleUnload;
    KG_FN(cuModuleGetFunction) ModuleGetFunction;
    KG_FN(cuFuncGetAttribute) FuncGetAttribute;
    KG_FN(cuFuncSetAttribute) FuncSetAttribute;
    CUresult (*FuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *); /* optional: driver >= 12.4 */
    KG_FN(cuLaunchKernel) LaunchKernel;
    KG_FN(cuStreamCreate) StreamCreate;
    KG_FN(cuStreamDestroy) StreamDestroy;
    KG_FN(cuEventCreate) EventCreate;
    KG_FN(cuEventRecord) EventRecord;
    KG_FN(cuEventElapsedTime) EventElapsedTime; /* _v2 (12.8+) or the original: one signature */
    KG_FN(cuEventDestroy) EventDestroy;
    KG_FN(cuMemAlloc) MemAlloc;
    KG_FN(cuMemFree) MemFree;
    KG_FN(cuMemcpyHtoD) MemcpyHtoD;
    KG_FN(cuMemcpyDtoH) MemcpyDtoH;
    KG_FN(cuMemsetD8) MemsetD8;
    KG_FN(cuStreamWaitValue32) StreamWaitValue32;   /* optional: stream memory operations */
    KG_FN(cuStreamWriteValue32) StreamWriteValue32; /* optional */
};

/* libnvrtc (the runtime compiler). */
struct kg_nvrtc_api {
    void *lib;
    char path[640];
    int major, minor;
    KG_FN(nvrtcVersion) Version;
    KG_FN(nvrtcGetErrorString) GetErrorString;
    KG_FN(nvrtcCreateProgram) CreateProgram;
    KG_FN(nvrtcDestroyProgram) DestroyProgram;
    KG_FN(nvrtcCompileProgram) CompileProgram;
    KG_FN(nvrtcGetProgramLogSize) GetProgramLogSize;
    KG_FN(nvrtcGetProgramLog) GetProgramLog;
    KG_FN(nvrtcGetPTXSize) GetPTXSize;
    KG_FN(nvrtcGetPTX) GetPTX;
    KG_FN(nvrtcGetCUBINSize) GetCUBINSize; /* optional: NVRTC >= 11.1 */
    KG_FN(nvrtcGetCUBIN) GetCUBIN;         /* optional: NVRTC >= 11.1 */
    KG_FN(nvrtcAddNameExpression) AddNameExpression;
    KG_FN(nvrtcGetLoweredName) GetLoweredName;
    KG_FN(nvrtcGetNumSupportedArchs) GetNumSupportedArchs; /* optional: NVRTC >= 11.2 */
    KG_FN(nvrtcGetSupportedArchs) GetSupportedArchs;       /* optional: NVRTC >= 11.2 */
};

#endif
