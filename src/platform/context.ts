import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import type { Db } from './db/db.ts';
import type { Mailer } from './mail.ts';

/**
 * The services every domain may be given, built once per app by `buildApp` (src/app.ts). A domain
 * takes the part it needs (`Pick<AppContext, 'db' | 'clock'>`); what one domain needs from another
 * is passed in beside it at wiring time, never added here.
 */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  mailer: Mailer;
}
