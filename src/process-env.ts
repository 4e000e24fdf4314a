/**
 * Environment the service's processes start with: the server, by `npm start` (package.json), the container image
 * (Dockerfile), the benchmarks and the tests that run the built server; and the CLIs that load data (`npm run import`,
 * `seed`, `stats-admin`), which hold a version's columns while they make its row index. It must be set before the
 * process starts, since glibc's malloc reads it at its first allocation.
 *
 * MALLOC_MMAP_THRESHOLD_: a fixed 128 KB. By default glibc raises the threshold to the size of each large block
 * freed (up to 32 MB), so the buffers of large pages, compressed streams and row index pieces soon come from its
 * heap, which it seldom gives back: a server and an import that handle large rows keep a tenth to a fifth more
 * memory without it (docs/performance.md, "Figures behind the code's choices").
 */
export const SERVICE_PROCESS_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;
