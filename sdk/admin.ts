import type { Static } from 'typebox';
import type { AdminUpgradeRefBody, AdminUpgradeStatusBody, UpgradeStatusAnswer, UpgradeView } from './contract/card-upgrades.ts';
import { CardServiceError, parseJsonLossless, stringifyJsonLossless, encodeQuery, transportError, type Envelope, type QueryValue } from './client.ts';
import type {
  CreatedPartner as CreatedPartnerSchema, CreatePartnerBody, CredentialLink as CredentialLinkSchema, CredentialLinkBody, PartnerView,
  UpdatePartnerBody,
} from './contract/partners.ts';

/** Request and answer types of the admin routes, from the schemas that validate them (sdk/contract/partners.ts). */
export type CreatePartnerInput = Static<typeof CreatePartnerBody>;
/** Sandbox answers with apiKey and secretKey; production with null credentials (retrieved through a link, 4.1). */
export type CreatedPartner = Static<typeof CreatedPartnerSchema>;
export type UpdatePartnerInput = Omit<Static<typeof UpdatePartnerBody>, 'partnerId'>;
export type CredentialLinkInput = Static<typeof CredentialLinkBody>;
export type CredentialLink = Static<typeof CredentialLinkSchema>;
export type AdminPartnerView = Static<typeof PartnerView>;

/** Operator client for the admin API (D13), authenticated with the bearer ADMIN_TOKEN. */
export class AdminClient {
  constructor(private readonly baseUrl: string, private readonly token: string) {}

  async raw<T = unknown>(method: 'GET' | 'POST', path: string, options: { query?: Record<string, QueryValue>; body?: unknown } = {}) {
    const query = options.query ? encodeQuery(options.query) : '';
    const url = this.baseUrl + path + (query ? `?${query}` : '');
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
        body: method === 'POST' ? stringifyJsonLossless(options.body ?? {}) : undefined,
        signal: AbortSignal.timeout(60_000),
      });
      text = await res.text();
    } catch (err) {
      throw transportError(err, 60_000, this.baseUrl + path);
    }
    let envelope: Envelope<T> | null = null;
    try {
      envelope = parseJsonLossless(text) as Envelope<T>;
    } catch {
      // handled below
    }
    if (!envelope || typeof envelope.code !== 'string') {
      throw new CardServiceError('INVALID_RESPONSE', `HTTP ${res.status} from ${this.baseUrl + path} is not a JSON envelope`, res.status, null, null, res.headers.get('x-request-id'));
    }
    return { status: res.status, envelope, requestId: res.headers.get('x-request-id') };
  }

  async call<T = unknown>(method: 'GET' | 'POST', path: string, options: { query?: Record<string, QueryValue>; body?: unknown } = {}): Promise<T> {
    const { status, envelope, requestId } = await this.raw<T>(method, path, options);
    if (envelope.code !== 'SYS_SUCCESS') throw new CardServiceError(envelope.code, envelope.message ?? '', status, envelope.data, envelope, requestId);
    return envelope.data;
  }

  /** Creates or replaces an asset of the managed-balance model (D35). */
  upsertAsset(input: { asset: string; network: string; logo: string; scale: number; usdPegged: boolean; usdRate?: unknown; status: 'ACTIVE' | 'INACTIVE'; sortOrder?: number }) {
    return this.call<unknown[]>('POST', '/internal/admin/v1/assets', { body: input });
  }

  /** Freezes or unfreezes capabilities of a partner's managed user (D20). */
  setUserRestrictions(input: { partnerId: string; externalUserId: string; addRestrictions?: string[]; removeRestrictions?: string[]; remark?: string }) {
    return this.call<{ externalUserId: string; restrictions: string[] }>('POST', '/internal/admin/v1/managed-users/restrictions', { body: input });
  }

  /** The card bureau's progress of a physical card upgrade (issue 30); SHIPPED answers a drawn activation code once. */
  cardUpgradeStatus(input: Static<typeof AdminUpgradeStatusBody>): Promise<Static<typeof UpgradeStatusAnswer>> {
    return this.call('POST', '/internal/admin/v1/card-upgrades/status', { body: input });
  }

  /** Unlocks an activation locked by wrong codes (issue 30). */
  unlockCardActivation(input: Static<typeof AdminUpgradeRefBody>): Promise<Static<typeof UpgradeView>> {
    return this.call('POST', '/internal/admin/v1/card-upgrades/unlock-activation', { body: input });
  }

  createPartner(input: CreatePartnerInput): Promise<CreatedPartner> {
    return this.call('POST', '/internal/admin/v1/partners', { body: input });
  }

  updatePartner(partnerId: string, changes: UpdatePartnerInput): Promise<AdminPartnerView> {
    return this.call('POST', '/internal/admin/v1/partners/update', { body: { partnerId, ...changes } });
  }

  createCredentialLink(input: CredentialLinkInput): Promise<CredentialLink> {
    return this.call('POST', '/internal/admin/v1/credential-links', { body: input });
  }

  /** Issues a card network ingress key (D40); the secret is in this answer only. */
  createNetworkKey(input: { name: string; ipAllowlist?: string[] }) {
    return this.call<{ networkKeyId: string; name: string; apiKey: string; secretKey: string; ipAllowlist: string[]; status: string; createTime: string }>(
      'POST', '/internal/admin/v1/network-keys', { body: input });
  }
}
