import path from 'node:path';
import type { Config } from '../../config.ts';
import { openEmbedded, openPostgres, type Db } from './db.ts';

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded database in DATA_DIR/pgdata. */
export function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) return openPostgres({ connectionString: config.databaseUrl, poolSize: config.dbPoolSize });
  return openEmbedded(path.join(config.dataDir, 'pgdata'));
}
