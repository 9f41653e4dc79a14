/**
 * Who is calling: the partner a signed request was authenticated as (5.2-5.4, D5-D7). The partners
 * domain authenticates it; routes (platform/http/router.ts) and domains only read it. Shared and
 * frozen (it comes from a cache), never mutated.
 */

/** 5.5: the partner's address lists, one per purpose; IP addresses or CIDR blocks. */
export interface IpWhitelist {
  api: string[];
  webhook: string[];
  auth: string[];
  retrieval: string[];
}

/** D27: one iv for the three secure-card fields (the spec) or one per field. */
export type SecureCardIvMode = 'SHARED' | 'PER_FIELD';

export interface AuthenticatedPartner {
  readonly partnerId: string;
  readonly name: string;
  readonly apiKey: string;
  /** The partner's secret key, decrypted: signs webhooks and encrypts secure-card answers. */
  readonly secretKey: string;
  readonly pciCertified: boolean;
  readonly webhookUrl: string | null;
  readonly authUrl: string | null;
  readonly externalPublicKey: string | null;
  readonly ipWhitelist: IpWhitelist;
  readonly secureCardIvMode: SecureCardIvMode;
  readonly status: 'ACTIVE' | 'DISABLED';
}

/**
 * Operator roles (issue 29), enforced on the server for the console and the admin API alike:
 * viewer reads; support decides KYC, blocks and unblocks cards, resends events; risk sets
 * restrictions, suspensions and velocity rules; admin does everything (partners, keys, card
 * profiles, operators). support and risk each include viewer; admin includes all.
 */
export type OperatorRole = 'viewer' | 'support' | 'risk' | 'admin';
export const OPERATOR_ROLES: readonly OperatorRole[] = ['viewer', 'support', 'risk', 'admin'];

/** Whether an operator of role `has` may do what needs role `needs`. */
export function roleAllows(has: OperatorRole, needs: OperatorRole): boolean {
  return has === 'admin' || needs === 'viewer' || has === needs;
}

/**
 * Who is calling an admin route or the console: a named operator (session cookie) or the admin
 * bearer token (automation and bootstrap, its own actor, role admin). `channel` says where the
 * action came from; `cli` is the bearer token with the admin CLI's user agent (a label, not proof).
 */
export interface AdminCaller {
  readonly actor: string;
  readonly operatorId: string | null;
  readonly role: OperatorRole;
  readonly channel: 'console' | 'admin-api' | 'cli';
}
