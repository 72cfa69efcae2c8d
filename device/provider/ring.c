/* Shared rings: mapping and the doorbell. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vhca.h"

int vhca_ring_map(struct vhca_ring *ring, int fd, uint32_t entries, uint32_t entry_size) {
  if (entries == 0 || (entries & (entries - 1))) return EPROTO;
  size_t len = (size_t)vhca_ring_bytes(entries, entry_size);
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errno;
  ring->hdr = p;
  ring->entries = (uint8_t *)p + sizeof(struct vhca_ring_hdr);
  ring->mask = entries - 1;
  ring->entry_size = entry_size;
  ring->local = 0;
  ring->map_len = len;
  pthread_spin_init(&ring->lock, PTHREAD_PROCESS_PRIVATE);
  return 0;
}

void vhca_ring_unmap(struct vhca_ring *ring) {
  if (!ring->hdr) return;
  munmap(ring->hdr, ring->map_len);
  pthread_spin_destroy(&ring->lock);
  ring->hdr = NULL;
}

/* Called after publishing a producer index. The fence pairs with the
 * engine's fence between setting `sleeping` and re-checking the rings, so
 * either the engine sees our index or we see it asleep and wake it. */
void vhca_ring_doorbell(struct vhca_context *ctx) {
  atomic_thread_fence(memory_order_seq_cst);
  if (__atomic_load_n(&ctx->status->sleeping, __ATOMIC_RELAXED)) {
    uint64_t one = 1;
    ssize_t r = write(ctx->doorbell_fd, &one, sizeof(one));
    (void)r; /* EAGAIN means the counter is already non-zero: awake soon */
  }
}
