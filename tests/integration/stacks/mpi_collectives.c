/* The collectives AI and HPC jobs lean on, over whatever the MPI library
 * carries them on (here Open MPI's UCX PML on vHCAs).
 *
 *   mpi_collectives           checks MPI_Allreduce, MPI_Allgather, MPI_Alltoall,
 *                             MPI_Bcast and MPI_Reduce_scatter_block at several
 *                             sizes, both sides of the eager/rendezvous switch;
 *                             exits 1 if any element is wrong
 *   mpi_collectives --bench   prints an OSU-style MPI_Allreduce latency table
 *
 * Every value is a function of (sender, receiver, index), so a block that
 * lands at the wrong rank or offset is caught, not only a corrupt byte. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

/* Small (< 2^20) so sums over ranks never overflow an int. */
static int val(int a, int b, int c) {
  unsigned h = (unsigned)a * 2654435761u ^ (unsigned)b * 40503u ^ (unsigned)c * 2246822519u;
  return (int)((h ^ (h >> 13)) & 0xfffff);
}

static int *ints(size_t n) {
  int *p = malloc(n * sizeof(int) + 1);
  if (!p) MPI_Abort(MPI_COMM_WORLD, 2);
  return p;
}

/* Block d of `in` (count ints) is for rank d: val(me, d, i). */
static void fill_per_peer(int *in, size_t n, int count) {
  for (size_t i = 0; i < n; ++i) in[i] = val(rank, (int)(i / count), (int)(i % count));
}

/* Reports one wrong element; the caller counts it and stops looking. */
static long report(const char *op, int count, size_t i, int got, int want) {
  fprintf(stderr, "rank %d: %s count %d: element %zu is %d, want %d\n", rank, op, count, i, got, want);
  return 1;
}

static long check_allreduce(int count) {
  int *in = ints(count), *out = ints(count);
  long bad = 0;
  for (int i = 0; i < count; ++i) in[i] = val(rank, i, 1);
  MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < count && !bad; ++i) {
    int want = 0;
    for (int r = 0; r < nprocs; ++r) want += val(r, i, 1);
    if (out[i] != want) bad += report("MPI_Allreduce", count, i, out[i], want);
  }
  free(in);
  free(out);
  return bad;
}

static long check_allgather(int count) {
  int *in = ints(count), *out = ints((size_t)count * nprocs);
  long bad = 0;
  for (int i = 0; i < count; ++i) in[i] = val(rank, i, 2);
  MPI_Allgather(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
  for (size_t i = 0; i < (size_t)count * nprocs && !bad; ++i) {
    const int want = val((int)(i / count), (int)(i % count), 2);
    if (out[i] != want) bad += report("MPI_Allgather", count, i, out[i], want);
  }
  free(in);
  free(out);
  return bad;
}

static long check_alltoall(int count) {
  const size_t n = (size_t)count * nprocs;
  int *in = ints(n), *out = ints(n);
  long bad = 0;
  fill_per_peer(in, n, count);
  MPI_Alltoall(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
  for (size_t i = 0; i < n && !bad; ++i) {
    const int want = val((int)(i / count), rank, (int)(i % count));
    if (out[i] != want) bad += report("MPI_Alltoall", count, i, out[i], want);
  }
  free(in);
  free(out);
  return bad;
}

static long check_bcast(int count) {
  int *buf = ints(count);
  long bad = 0;
  for (int root = 0; root < nprocs; ++root) {
    for (int i = 0; i < count; ++i) buf[i] = rank == root ? val(root, i, 3) : -1;
    MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < count && !bad; ++i)
      if (buf[i] != val(root, i, 3)) bad += report("MPI_Bcast", count, i, buf[i], val(root, i, 3));
  }
  free(buf);
  return bad;
}

static long check_reduce_scatter(int count) {
  const size_t n = (size_t)count * nprocs;
  int *in = ints(n), *out = ints(count);
  long bad = 0;
  fill_per_peer(in, n, count);
  MPI_Reduce_scatter_block(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < count && !bad; ++i) {
    int want = 0;
    for (int r = 0; r < nprocs; ++r) want += val(r, rank, i);
    if (out[i] != want) bad += report("MPI_Reduce_scatter_block", count, i, out[i], want);
  }
  free(in);
  free(out);
  return bad;
}

/* Sizes in ints: a single element, odd ones, and 64 KiB and 128 KiB ones
 * that UCX sends by rendezvous (RDMA READ on rc_verbs) rather than eagerly.
 * (Small enough that a sanitizer-built fabricd on 2 cores finishes in time.) */
static int check(void) {
  static const int counts[] = {1, 7, 1000, 16384, 32768};
  long bad = 0, checks = 0;
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c) {
    bad += check_allreduce(counts[c]) + check_allgather(counts[c]) + check_alltoall(counts[c]) +
           check_bcast(counts[c]) + check_reduce_scatter(counts[c]);
    checks += 5;
  }
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("mpi_collectives: %d ranks, %ld collective calls checked, %ld wrong\n", nprocs, checks, total);
  return total == 0 ? 0 : 1;
}

/* OSU-style: per size, the mean over iterations of the slowest rank's time. */
static int bench(void) {
  if (rank == 0) printf("# MPI_Allreduce (MPI_SUM of floats), %d ranks\n# %-10s %15s %12s\n", nprocs, "Size",
                        "Avg Latency(us)", "Iterations");
  for (int bytes = 4; bytes <= (1 << 20); bytes *= 4) {
    const int count = bytes / (int)sizeof(float), iters = bytes <= 16384 ? 200 : 20;
    float *in = calloc(count, sizeof(float)), *out = calloc(count, sizeof(float));
    if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int w = 0; w < 5; ++w) MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double mine = (MPI_Wtime() - t0) / iters * 1e6, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("  %-10d %15.2f %12d\n", bytes, slowest, iters);
    fflush(stdout);
    free(in);
    free(out);
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const int rc = argc > 1 && strcmp(argv[1], "--bench") == 0 ? bench() : check();
  MPI_Finalize();
  return rc;
}
