import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.ts';
import { StartupError } from '../startup-error.ts';
import { openEmbedded, openPostgres, type Db } from './db.ts';

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded database in DATA_DIR/pgdata. */
export async function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) {
    try {
      return await openPostgres({ connectionString: config.databaseUrl, poolSize: config.dbPoolSize });
    } catch (err) {
      throw new StartupError(`cannot open the database at DATABASE_URL ${databaseWhere(config.databaseUrl)}: ${(err as Error).message}; check that PostgreSQL runs there and DATABASE_URL is right`);
    }
  }
  const pgdata = path.join(config.dataDir, 'pgdata');
  const release = lockDataFolder(pgdata);
  try {
    const db = await openEmbedded(pgdata);
    return { ...db, close: async () => { try { await db.close(); } finally { release(); } } };
  } catch (err) {
    release();
    throw err;
  }
}

/** host:port/database of a PostgreSQL URL, never its user or password. */
function databaseWhere(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * docs/operations.md: "One process at a time may open a data folder". The embedded database has no
 * lock of its own: a second `npm start` (or `npm run migrate`, `ledger-audit`) on the same DATA_DIR
 * opened it beside the running service and both wrote to the same files. `pgdata.lock` beside the
 * folder holds the owner's pid; a lock whose process is gone (a kill -9) is taken over.
 */
export function lockDataFolder(pgdata: string): () => void {
  const file = `${pgdata}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        try { unlinkSync(file); } catch { /* already gone */ }
      };
      process.on('exit', release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new StartupError(`cannot create ${file}: the data folder ${path.dirname(pgdata)} does not exist or is not writable; set DATA_DIR`);
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new StartupError(`cannot create ${file}: ${(err as Error).message}`);
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      // Our own pid in it is a lock left by an earlier life of this container (a service that is pid 1,
      // or any fixed pid, after a crash): taken over like a dead owner's.
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new StartupError(`the embedded database in ${pgdata} is in use by process ${pid} (one process at a time); stop it, or set DATA_DIR to another folder`);
      }
      try { unlinkSync(file); } catch { /* taken over by another starter */ }
    }
  }
  throw new StartupError(`the embedded database in ${pgdata} is being opened by another process; try again`);
}
