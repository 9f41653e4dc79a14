/** CPU counters of Linux's /proc, shared by the bench scenarios: per request, steadier than throughput on a shared host. */
import { readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_S = 100;

/**
 * utime + stime of a process in ms, from /proc (Linux); NaN when unavailable. With `reaped`, also the
 * CPU of its children that ended (cutime + cstime): the postmaster's count of exited backends.
 */
export function processCpuMs(pid: number, reaped = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return NaN;
  }
}

/**
 * Busy CPU of the whole machine so far (/proc/stat: everything but idle, iowait and steal; all cores), in
 * ms: the load generator, the kernel's loopback work and the partner process included. Per request,
 * it is what the machine pays for one request, steadier than throughput when neighbours share the host.
 */
export function machineCpuMs(): number {
  try {
    // Steal (the host ran someone else) is not this machine's work.
    const [, user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    return ((user + nice + system + irq + softirq) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return NaN;
  }
}
