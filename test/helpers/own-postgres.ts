import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { pgBinDir } from '../../ops/runtime.ts';

/**
 * A PostgreSQL server of the test's own (its own data directory and port), so a test can stop and
 * start it under a running service (issue 28). Uses the machine's PostgreSQL binaries; as root, the
 * server runs as the `postgres` user (PostgreSQL refuses to run as root).
 */
export interface OwnPostgres {
  url: string;
  port: number;
  start(): void;
  stop(): void;
  destroy(): void;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function ownPostgres(): Promise<OwnPostgres> {
  const bin = pgBinDir();
  const asRoot = userInfo().uid === 0;
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    const r = spawnSync(file, argv, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'cardsvc-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const pg: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () => run('pg_ctl', ['-D', data, '-o', opts, '-l', path.join(dir, 'server.log'), '-w', 'start']),
    // Fast shutdown: sessions are terminated, in-flight transactions roll back (what a failover does to them).
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    destroy: () => {
      spawnSync(asRoot ? 'runuser' : path.join(bin, 'pg_ctl'), asRoot ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'] : ['-D', data, '-m', 'immediate', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  pg.start();
  return pg;
}
