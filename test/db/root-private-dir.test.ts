import { lstat, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';

/**
 * As root, the embedded PostgreSQL runs as the `postgres` user, which cannot enter a 0700 directory such as /root.
 * A data directory there still works: the cluster is placed where that user can reach it, and `<DATA_DIR>/postgres`
 * points to it. (Only meaningful as root; as any other user PostgreSQL runs as that user.)
 */
describe.skipIf(process.getuid?.() !== 0)('embedded PostgreSQL as root under a private directory', () => {
  it('starts, serves, and is found again through <DATA_DIR>/postgres', async () => {
    const privateDir = await mkdtemp(path.join(tmpdir(), 'private-'));
    expect((await stat(privateDir)).mode & 0o777).toBe(0o700);
    const dataDir = path.join(privateDir, 'checkout', '.data');
    const database = await startEmbeddedPostgres(dataDir);
    try {
      expect((await lstat(path.join(dataDir, 'postgres'))).isSymbolicLink()).toBe(true);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await client.end();
      // A second process on the same DATA_DIR (a CLI while the server runs) joins the running cluster.
      const joined = await startEmbeddedPostgres(dataDir);
      expect(joined.owned).toBe(false);
      expect(joined.url).toBe(database.url);
    } finally {
      await database.destroy();
      await rm(privateDir, { recursive: true, force: true });
    }
    await expect(stat(database.clusterDir)).rejects.toThrow();
  }, 120000);
});
