import { readFileSync } from 'node:fs';
import { startArgs } from '../../ops/runtime.ts';

/**
 * The node arguments of the service exactly as `npm start` runs it (package.json: `exec node
 * <args...>`: compiled JavaScript from dist/, its V8 flags), so the bench measures what production
 * runs. `npm run bench` builds dist/ first. BENCH_CPU_PROFILE_DIR adds a V8 CPU profile per service.
 */
export function serviceArgs(): string[] {
  const profile = process.env.BENCH_CPU_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE_DIR}`] : [];
  return [...profile, ...startArgs()];
}

/** Resident memory of a process now and its peak so far, in MB (Linux /proc). */
export function residentMb(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}
