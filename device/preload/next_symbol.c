/* The libc definitions the shim's interposers call on to. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "shim.h"

#define SLOTS 32

/* One slot per name the shim calls on (fewer than SLOTS). */
static struct {
  const char *name;
  void *fn;
} cache[SLOTS];

void *vhca_next(const char *name) {
  for (int i = 0; i < SLOTS; ++i) {
    const char *n = __atomic_load_n(&cache[i].name, __ATOMIC_ACQUIRE);
    if (!n) {
      /* Claim the slot for the name first, then fill it: a reader that
       * finds the name before the pointer asks dlsym itself. */
      if (__atomic_compare_exchange_n(&cache[i].name, &n, name, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        void *fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(&cache[i].fn, fn, __ATOMIC_RELEASE);
        return fn;
      }
    }
    if (n == name || strcmp(n, name) == 0) {
      void *fn = __atomic_load_n(&cache[i].fn, __ATOMIC_ACQUIRE);
      return fn ? fn : dlsym(RTLD_NEXT, name);
    }
  }
  return dlsym(RTLD_NEXT, name);
}
