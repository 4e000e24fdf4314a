/**
 * Environment the service's processes start with: the server, by `npm start` (package.json), the container image
 * (Dockerfile), the benchmarks and the tests that run the built server; and the CLIs that load data (`npm run import`,
 * `seed`, `stats-admin`), which hold a version's columns while they make its row index. It must be set before the
 * process starts, since glibc's malloc reads it at its first allocation.
 *
 * MALLOC_MMAP_THRESHOLD_: a fixed 128 KB. By default glibc raises the threshold to the size of each large block
 * freed (up to 32 MB), so the buffers of large pages, compressed streams and row index pieces soon come from its
 * heap, which it seldom gives back: with the 5M-row index, 40 requests of each query shape left the server at
 * 409-428 MB RSS, and at 361-379 MB with the fixed threshold (five runs each; docs/performance.md); a 5M-row import's
 * peak RSS was 499-607 MB without it, 397-447 MB with it (docs/performance.md).
 */
export const SERVICE_PROCESS_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;
