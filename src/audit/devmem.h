/* devmem.h: a GPU's memory in use, as the driver reports it (NVML, dlopen'd: the same kgate runs
 * without a GPU), and the host's, for the audit's admission of checks: a check starts on a device
 * only while the device, and the host, have room for one more check of the size already seen. */
#ifndef KG_AUDIT_DEVMEM_H
#define KG_AUDIT_DEVMEM_H

#include <stdint.h>

/* Free and total bytes of the device CUDA_VISIBLE_DEVICES calls name (an index, or a GPU-/MIG-
 * UUID); 0, or -1 where that is not known (no NVML, no such device). The index is taken as
 * NVML's, which is CUDA's PCI-bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID, and the default order
 * on a host of one GPU model). KGATE_FAKE_DEVMEM=FILE (tests): the lines "NAME FREE_MIB
 * TOTAL_MIB" of FILE instead, read again on every call. */
int kg_devmem(const char *name, uint64_t *free_b, uint64_t *total_b);

/* The host's memory the same way: what a new process could still allocate (kg_mem_available:
 * MemAvailable, a cgroup's limit) and the total; 0, or -1 where not known. KGATE_FAKE_HOSTMEM=
 * FILE (tests): its line "FREE_MIB TOTAL_MIB" instead, read again on every call. */
int kg_hostmem(uint64_t *free_b, uint64_t *total_b);

#endif
