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
