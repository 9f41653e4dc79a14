import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { pgBinDir } from '../runtime.ts';

/**
 * The high-availability topology of the rehearsal (issue 28), all on this machine with real parts:
 * one etcd, three PostgreSQL members managed by Patroni (synchronous replication), HAProxy sending
 * the service to the current primary (Patroni's REST health check) and spreading HTTP over the
 * service instances (their /readyz). Ports are fixed in a high range; the work folder is temporary.
 */

export const PORTS = {
  etcdClient: 23790,
  etcdPeer: 23800,
  pgPrimaryFrontend: 25000,
  httpFrontend: 28080,
  haproxyStats: 28090,
  members: [
    { name: 'pg1', pg: 25432, rest: 28008 },
    { name: 'pg2', pg: 25433, rest: 28009 },
    { name: 'pg3', pg: 25434, rest: 28010 },
  ],
  services: [28081, 28082],
} as const;

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
const asRoot = userInfo().uid === 0;

/** Debian packages the rehearsal needs, installed when their command is missing. */
export function ensureTools(): void {
  const wanted: [string, string][] = [['patroni', 'patroni'], ['etcd', 'etcd-server'], ['haproxy', 'haproxy']];
  const missing = wanted.filter(([cmd]) => spawnSync('sh', ['-c', `command -v ${cmd} || test -x /usr/sbin/${cmd}`]).status !== 0).map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  console.log(`installing ${missing.join(', ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', ...missing]]) {
    const r = spawnSync('apt-get', args, { env, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status})`);
  }
}

/**
 * SIGKILL to a process (pid > 0) or a process group (pid < 0), from this process: procps-ng 4.0's
 * `kill -9 -PGID` signals the group of PGID's first digit only (`kill -9 -6940` killed group 6, the CI runner's).
 */
function sigkill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Runs a long-lived command (as the postgres user when we are root), its output to a log file. */
function daemon(work: string, name: string, file: string, args: string[], asPostgres: boolean): ChildProcess {
  const log = openSync(path.join(work, `${name}.log`), 'a');
  const [cmd, argv] = asPostgres && asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  const child = spawn(cmd, argv, { stdio: ['ignore', log, log], detached: true });
  child.unref();
  return child;
}

export interface Member {
  name: string;
  pg: number;
  rest: number;
  process: ChildProcess | null;
}

export class Topology {
  readonly members: Member[] = PORTS.members.map((m) => ({ ...m, process: null }));
  private etcd: ChildProcess | null = null;
  private haproxy: ChildProcess | null = null;

  constructor(readonly work: string) {
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(work, uid, gid);
    }
  }

  /** The database URL the service uses: HAProxy's frontend, always the current primary. */
  get databaseUrl(): string {
    return `postgres://postgres:pg@127.0.0.1:${PORTS.pgPrimaryFrontend}/postgres`;
  }

  startEtcd(): void {
    this.etcd = daemon(this.work, 'etcd', 'etcd', [
      '--name', 'e1', '--data-dir', path.join(this.work, 'etcd'),
      '--listen-client-urls', `http://127.0.0.1:${PORTS.etcdClient}`, '--advertise-client-urls', `http://127.0.0.1:${PORTS.etcdClient}`,
      '--listen-peer-urls', `http://127.0.0.1:${PORTS.etcdPeer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${PORTS.etcdPeer}`,
      '--initial-cluster', `e1=http://127.0.0.1:${PORTS.etcdPeer}`,
    ], false);
  }

  private patroniConfig(m: Member): string {
    const dir = path.join(this.work, m.name);
    // Synchronous replication: a commit is acknowledged only when a standby has it, so a failover
    // never loses an acknowledged write (synchronous_mode; maximum_lag_on_failover bounds async lag).
    return `scope: cardsvc-rehearsal
name: ${m.name}
restapi:
  listen: 127.0.0.1:${m.rest}
  connect_address: 127.0.0.1:${m.rest}
etcd3:
  hosts: 127.0.0.1:${PORTS.etcdClient}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_log_hints: 'on'
        max_connections: 100
        synchronous_commit: 'on'
  initdb:
    - encoding: UTF8
    - data-checksums
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${m.pg}
  connect_address: 127.0.0.1:${m.pg}
  data_dir: ${dir}/data
  bin_dir: ${pgBinDir()}
  pgpass: ${dir}/pgpass
  authentication:
    replication:
      username: replicator
      password: rep
    superuser:
      username: postgres
      password: pg
    rewind:
      username: postgres
      password: pg
  parameters:
    unix_socket_directories: '${dir}'
tags:
  nofailover: false
  noloadbalance: false
`;
  }

  startMember(m: Member): void {
    const dir = path.join(this.work, m.name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const config = path.join(dir, 'patroni.yml');
    writeFileSync(config, this.patroniConfig(m));
    if (asRoot) spawnSync('chown', ['-R', 'postgres:postgres', dir]);
    m.process = daemon(this.work, m.name, '/usr/bin/patroni', [config], true);
  }

  /** Loss of a database host: Patroni and its PostgreSQL killed at once (kill -9). */
  killMember(m: Member): void {
    const dir = path.join(this.work, m.name);
    spawnSync('pkill', ['-9', '-f', `${dir}/patroni.yml`]);
    // The postmaster (its pid is the first line of postmaster.pid) and every backend it forked.
    const pidFile = path.join(dir, 'data', 'postmaster.pid');
    const pid = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split('\n')[0].trim() : '';
    if (/^\d+$/.test(pid)) {
      spawnSync('pkill', ['-9', '-P', pid]);
      sigkill(Number(pid));
    }
    m.process = null;
  }

  startHaproxy(): void {
    const services = PORTS.services.map((p, i) => `  server s${i + 1} 127.0.0.1:${p} check`).join('\n');
    const members = this.members.map((m) => `  server ${m.name} 127.0.0.1:${m.pg} check port ${m.rest}`).join('\n');
    const config = `global
  maxconn 2000
  stats socket ${path.join(this.work, 'haproxy.sock')} mode 600 level admin
defaults
  timeout connect 1s
  timeout client 60s
  timeout server 60s
  timeout check 1s
listen postgres_primary
  mode tcp
  bind 127.0.0.1:${PORTS.pgPrimaryFrontend}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions
${members}
listen cardsvc
  mode http
  bind 127.0.0.1:${PORTS.httpFrontend}
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  option redispatch
  retries 2
  # Only a connection that was never made is retried on another instance: a request that reached an
  # instance may have been booked, and the signed copy would be refused as a replay anyway. The
  # client retries it with a fresh signature and the same id (it is idempotent on its id).
  retry-on conn-failure
  default-server inter 500ms fall 2 rise 1
${services}
`;
    const file = path.join(this.work, 'haproxy.cfg');
    writeFileSync(file, config);
    const check = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy config invalid: ${check.stdout}${check.stderr}`);
    this.haproxy = daemon(this.work, 'haproxy', 'haproxy', ['-db', '-f', file], false);
  }

  async primary(): Promise<Member | null> {
    for (const m of this.members) {
      const ok = await fetch(`http://127.0.0.1:${m.rest}/primary`, { method: 'GET', signal: AbortSignal.timeout(1000) }).then((r) => r.status === 200, () => false);
      if (ok) return m;
    }
    return null;
  }

  /** Waits until a primary and `syncStandbys` synchronous standbys are up. */
  async waitCluster(syncStandbys: number, timeoutMs: number): Promise<Member> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const primary = await this.primary();
      if (primary) {
        const cluster = await fetch(`http://127.0.0.1:${primary.rest}/cluster`).then((r) => r.json() as Promise<{ members: { role: string; state: string }[] }>, () => null);
        const sync = cluster?.members.filter((x) => x.role === 'sync_standby' && (x.state === 'running' || x.state === 'streaming')).length ?? 0;
        if (sync >= syncStandbys) return primary;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`the cluster did not reach a primary with ${syncStandbys} synchronous standby(s) within ${timeoutMs} ms (logs in ${this.work})`);
  }

  stopAll(): void {
    for (const m of this.members) this.killMember(m);
    // Their process groups (each was started detached, so it leads its own group).
    for (const p of [this.haproxy, this.etcd]) if (p?.pid) sigkill(-p.pid);
    spawnSync('pkill', ['-9', '-f', this.work]);
  }
}
