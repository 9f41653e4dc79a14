import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { DeploymentEnv } from '../deployment.ts';
import { paramInvalid } from '../errors.ts';

/**
 * SSRF guard for the URLs the service calls on a partner's behalf (D38: webhook_url and auth_url).
 * In production an address that is loopback, private, link-local or otherwise not publicly
 * routable is refused; sandbox allows them so partners can develop against a local receiver.
 *
 * The check runs twice: when an operator stores the URL (a clear mistake is refused early) and on
 * every connection, inside the socket's DNS lookup (so a name that later resolves to an internal
 * address, e.g. DNS rebinding, is refused at the moment it would be connected to).
 */

const FORBIDDEN_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata endpoints live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
];

const FORBIDDEN_V6: Array<[string, number]> = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible block
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const forbidden = new BlockList();
for (const [net, bits] of FORBIDDEN_V4) forbidden.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of FORBIDDEN_V6) forbidden.addSubnet(net, bits, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (an embedded dotted quad is allowed at the end). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0];
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad[1].split('.').map(Number);
    text = text.slice(0, -quad[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : new Array(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

function v4FromGroups(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), when it carries one. */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (g.length !== 8) return null;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return v4FromGroups(g[6], g[7]); // ::ffff:a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4FromGroups(g[6], g[7]); // 64:ff9b::/96
  if (g[0] === 0x2002) return v4FromGroups(g[1], g[2]); // 6to4
  return null;
}

/** True for an address the service must not call in production. Anything unparsable is refused. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return forbidden.check(bare, 'ipv4');
  if (family !== 6) return true;
  const inner = embeddedIpv4(bare);
  if (inner !== null && forbidden.check(inner, 'ipv4')) return true;
  return forbidden.check(bare.split('%')[0], 'ipv6');
}

export class ForbiddenAddressError extends Error {
  readonly code = 'ESSRFBLOCKED';
  constructor(readonly host: string, readonly address: string) {
    super(`${host} resolves to ${address}, a loopback, private or link-local address (refused in production, D38)`);
    this.name = 'ForbiddenAddressError';
  }
}

/**
 * A socket `lookup` that resolves like the system resolver but fails with ForbiddenAddressError
 * when any address of the name is forbidden. The connection is made to the very address checked
 * here, so there is no window between the check and the connect.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) return callback(new ForbiddenAddressError(hostname, bad.address) as NodeJS.ErrnoException, '', 0);
    if (addresses.length === 0) {
      const none = Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }) as NodeJS.ErrnoException;
      return callback(none, '', 0);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
};

/** The host of a URL as the socket layer sees it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** How long an admin request waits for DNS when checking a URL before accepting it unchecked. */
const STORE_TIME_DNS_TIMEOUT_MS = 2000;

function resolveAll(host: string): Promise<LookupAddress[] | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), STORE_TIME_DNS_TIMEOUT_MS);
    dnsLookup(host, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? null : addresses);
    });
  });
}

/**
 * D38 at the moment an operator stores a webhook_url or auth_url: in production a URL whose host
 * is (or resolves to) a forbidden address is DAPI_PARAM_INVALID naming the field. A name that does
 * not resolve yet is accepted (it may be set up later); every connection is checked again anyway.
 */
export async function assertCallbackUrlAllowed(env: DeploymentEnv, field: string, value: string | null | undefined): Promise<void> {
  if (env !== 'production' || value === null || value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw paramInvalid(field, 'is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw paramInvalid(field, 'must be an http or https URL');
  const host = hostOf(url);
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveAll(host);
  const bad = addresses?.find((a) => isForbiddenAddress(a.address));
  if (bad) {
    throw paramInvalid(field, `resolves to ${bad.address}, a loopback, private or link-local address (refused in production)`);
  }
}
