import { BlockList, isIP } from 'node:net';
import type { DeploymentEnv } from '../deployment.ts';

/** "::ffff:10.0.0.1" (IPv4 on a dual-stack socket) is the IPv4 address 10.0.0.1. */
export function normalizeIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1] : ip;
}

/** A whitelist entry is an IPv4/IPv6 address or a CIDR block. */
export function isValidWhitelistEntry(entry: string): boolean {
  const [address, bits, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Built once per whitelist array: a cached partner's list is the same array on every request. */
const blockLists = new WeakMap<string[], BlockList>();

function blockListOf(entries: string[]): BlockList {
  const cached = blockLists.get(entries);
  if (cached) return cached;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  blockLists.set(entries, list);
  return list;
}

/** 5.5 and D13: an empty whitelist admits any address in sandbox and none in production. */
export function ipAllowed(entries: string[], ip: string, env: DeploymentEnv): boolean {
  if (entries.length === 0) return env === 'sandbox';
  const address = normalizeIp(ip);
  const family = isIP(address);
  if (family === 0) return false;
  return blockListOf(entries).check(address, family === 6 ? 'ipv6' : 'ipv4');
}
