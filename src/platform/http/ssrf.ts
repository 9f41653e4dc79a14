import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { DeploymentEnv } from '../deployment.ts';
import { paramInvalid } from '../errors.ts';

/**
 * SSRF guard for the URLs the service calls on a partner's behalf (D38: webhook_url and auth_url).
 * In production an address that is not globally routable unicast is refused; sandbox allows them so partners can develop against a local receiver.
 *
 * The check runs twice: when an operator stores the URL (a clear mistake is refused early) and on
 * every connection, inside the socket's DNS lookup (so a name that later resolves to an internal
 * address, e.g. DNS rebinding, is refused at the moment it would be connected to).
 */

/**
 * True for an address the service must not call in production; anything unparsable is refused.
 * Only globally routable unicast passes: ipaddr.js classifies the special-purpose ranges of the
 * IANA registries (private, loopback, link-local, carrier-grade NAT, documentation, benchmarking,
 * multicast, reserved, and the IPv6 translation and tunnelling prefixes: IPv4-mapped, NAT64
 * 64:ff9b::/96 and 64:ff9b:1::/48, Teredo 2001::/32, 6to4 2002::/16), and every one of them is
 * refused, whatever address it embeds. ::/96 (the deprecated IPv4-compatible block, with :: and
 * ::1) is refused explicitly: ipaddr.js calls most of it unicast.
 */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0];
  if (isIP(bare) === 0) return true;
  const parsed = ipaddr.process(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return true;
  return parsed.range() !== 'unicast';
}

/** Host names that always mean this machine (RFC 6761), whatever DNS says. */
function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * The host of a URL as it is dialled: IPv6 literals without brackets, lower case, trailing dots
 * removed (`localhost.` is `localhost`).
 */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.+$/, '');
}

/**
 * The part of the D38 policy that needs no DNS, the same at store time and at connect time: an
 * http(s) URL without credentials (`user:password@`), and in production not a local name or a
 * forbidden address literal. Null when the URL passes.
 */
export function callbackUrlViolation(url: URL, blockPrivateAddresses: boolean): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@)';
  if (!blockPrivateAddresses) return null;
  const host = hostOf(url);
  if (host === '') return 'has no host';
  if (isLocalName(host)) return `names this machine (${host}), refused in production`;
  if (isIP(host) && isForbiddenAddress(host)) return `is ${host}, a loopback, private, link-local or otherwise non-public address (refused in production)`;
  return null;
}

export class ForbiddenAddressError extends Error {
  readonly code = 'ESSRFBLOCKED';
  constructor(readonly host: string, readonly address: string) {
    super(`${host} resolves to ${address}, a loopback, private, link-local or otherwise non-public address (refused in production)`);
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
 * D38 at the moment an operator stores a webhook_url or auth_url: a URL carrying credentials is
 * refused everywhere; in production, a URL whose host is a local name or is (or resolves to) a
 * forbidden address is DAPI_PARAM_INVALID naming the field. A name that does not resolve yet is
 * accepted (it may be set up later); every connection is checked again anyway.
 */
export async function assertCallbackUrlAllowed(env: DeploymentEnv, field: string, value: string | null | undefined): Promise<void> {
  if (value === null || value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw paramInvalid(field, 'is not a URL');
  }
  const production = env === 'production';
  const violation = callbackUrlViolation(url, production);
  if (violation) throw paramInvalid(field, violation);
  if (!production) return;
  const host = hostOf(url);
  if (isIP(host)) return;
  const bad = (await resolveAll(host))?.find((a) => isForbiddenAddress(a.address));
  if (bad) {
    throw paramInvalid(field, `resolves to ${bad.address}, a loopback, private, link-local or otherwise non-public address (refused in production)`);
  }
}
