import type { Static } from 'typebox';
import type { AdminUpgradeRefBody, AdminUpgradeStatusBody, UpgradeStatusAnswer, UpgradeView } from './contract/card-upgrades.ts';
import {
  CardServiceError, parseJsonLossless, stringifyJsonLossless, encodeQuery, transportError, type Envelope, type PageOf, type QueryValue,
} from './client.ts';
import type {
  CreatedPartner as CreatedPartnerSchema, CreatePartnerBody, CredentialLink as CredentialLinkSchema, CredentialLinkBody, PartnerView,
  UpdatePartnerBody,
} from './contract/partners.ts';

/** Request and answer types of the admin routes, from the schemas that validate them (sdk/contract/partners.ts). */
export type CreatePartnerInput = Static<typeof CreatePartnerBody>;
/** Sandbox answers with apiKey and secretKey; production with null credentials (retrieved through a link) (4.1). */
export type CreatedPartner = Static<typeof CreatedPartnerSchema>;
export type UpdatePartnerInput = Omit<Static<typeof UpdatePartnerBody>, 'partnerId'>;
export type CredentialLinkInput = Static<typeof CredentialLinkBody>;
export type CredentialLink = Static<typeof CredentialLinkSchema>;
export type AdminPartnerView = Static<typeof PartnerView>;

/** Answer types of the other admin routes (their schemas live with the service's routes). */
export interface AdminPaging { page?: number; pageSize?: number }
export interface KycDecisionInput { customerId: string; decision: 'APPROVED' | 'REJECTED'; reason?: string }
export interface KycDecision { customerId: string; kycStatus: string; reason: string | null }
/** A mail of the outbox; `body` only when the service has no SMTP (sandbox). */
export interface OutboxMail {
  mailId: string; recipient: string; subject: string; body: string | null; transport: string; sentTime: string | null; error: string | null; createTime: string;
}
/** A card data key: never key material, only its check value. */
export interface CardKey { keyId: string; purpose: string; source: string; status: string; checkValue: string; createTime: string; retireTime: string | null }
export interface ReencryptProgress { reencrypted: number; remaining: number; activeKeyId: string }
export interface NetworkKeyView { networkKeyId: string; name: string; apiKey: string; ipAllowlist: string[]; status: string; createTime: string }
export type CreatedNetworkKey = NetworkKeyView & { secretKey: string };
export type OperatorRole = 'viewer' | 'support' | 'risk' | 'admin';
export interface OperatorView { operatorId: string; name: string; role: OperatorRole; status: string; lockedUntil: string | null; createdAt: string }
/** A password and TOTP secret, answered once. */
export interface OperatorCredentials { password: string; totpSecret: string; totpUri: string }
export interface OperatorUpdateInput { operatorId: string; role?: OperatorRole; status?: 'ACTIVE' | 'DISABLED'; unlock?: boolean; resetCredentials?: boolean }
export interface AuditFilter { actor?: string; action?: string; target?: string; before?: string; limit?: number }
export interface AuditEntry {
  seq: string; time: string; actor: string; role: string; channel: string; action: string; target: string | null; summary: unknown;
  outcome: string; sourceIp: string; requestId: string; hash: string;
}
/** A page of the audit trail: the next page is `before = next` (null on the last). */
export interface AuditPage { entries: AuditEntry[]; next: string | null }
export interface AuditVerification { ok: boolean; entries: number; headSeq: string; brokenAt: { seq: string; reason: string } | null }

export interface AdminClientOptions {
  /** The User-Agent sent; the audit trail labels an entry's channel by it (`cardsvc-admin-cli` is the CLI) (issue 29). */
  userAgent?: string;
  /** No complete answer within this is a TIMEOUT error (default 60 s). */
  timeoutMs?: number;
}

/** Operator client for the admin API (D13), authenticated with the bearer ADMIN_TOKEN. */
export class AdminClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(baseUrl: string, private readonly token: string, private readonly options: AdminClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  async raw<T = unknown>(method: 'GET' | 'POST', path: string, options: { query?: Record<string, QueryValue>; body?: unknown } = {}) {
    const query = options.query ? encodeQuery(options.query) : '';
    const url = this.baseUrl + path + (query ? `?${query}` : '');
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(this.options.userAgent ? { 'user-agent': this.options.userAgent } : {}),
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
        },
        body: method === 'POST' ? stringifyJsonLossless(options.body ?? {}) : undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw transportError(err, this.timeoutMs, this.baseUrl + path);
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

  listPartners(paging: AdminPaging = {}): Promise<PageOf<AdminPartnerView>> {
    return this.call('GET', '/internal/admin/v1/partners', { query: { ...paging } });
  }

  partner(partnerId: string): Promise<AdminPartnerView> {
    return this.call('GET', '/internal/admin/v1/partners/detail', { query: { partnerId } });
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

  /** Lists card network ingress keys (never their secrets). */
  networkKeys(): Promise<NetworkKeyView[]> {
    return this.call('GET', '/internal/admin/v1/network-keys');
  }

  revokeNetworkKey(networkKeyId: string): Promise<null> {
    return this.call('POST', '/internal/admin/v1/network-keys/revoke', { body: { networkKeyId } });
  }

  /** Decides an employee's KYC review in flight. */
  decideKyc(input: KycDecisionInput): Promise<KycDecision> {
    return this.call('POST', '/internal/admin/v1/kyc-decisions', { body: input });
  }

  /** The mail outbox, newest first. */
  outboxMail(filter: AdminPaging & { recipient?: string } = {}): Promise<PageOf<OutboxMail>> {
    return this.call('GET', '/internal/admin/v1/outbox-mail', { query: { ...filter } });
  }

  /** The card data keys: ids, purposes, check values. */
  cardKeys(): Promise<CardKey[]> {
    return this.call('GET', '/internal/admin/v1/card-keys');
  }

  /** Makes a new PAN data key active; then reencryptCardData until nothing remains. */
  rotatePanDataKey(): Promise<{ keyId: string }> {
    return this.call('POST', '/internal/admin/v1/card-keys/rotate', { body: { purpose: 'PAN_DATA' } });
  }

  /** Re-seals up to `limit` (1-1000) cards under a retired PAN data key with the active one. */
  reencryptCardData(limit?: number): Promise<ReencryptProgress> {
    return this.call('POST', '/internal/admin/v1/card-keys/reencrypt', { body: limit === undefined ? {} : { limit } });
  }

  /** Creates a named operator account (issue 29); its credentials are in this answer only. */
  createOperator(input: { name: string; role: OperatorRole }): Promise<OperatorView & { credentials: OperatorCredentials }> {
    return this.call('POST', '/internal/admin/v1/operators', { body: input });
  }

  operators(): Promise<OperatorView[]> {
    return this.call('GET', '/internal/admin/v1/operators');
  }

  /** Changes an operator's role or status, unlocks it, or resets its credentials (answered once). */
  updateOperator(input: OperatorUpdateInput): Promise<OperatorView & { credentials?: OperatorCredentials }> {
    return this.call('POST', '/internal/admin/v1/operators/update', { body: input });
  }

  /** The audit trail, newest first. */
  auditTrail(filter: AuditFilter = {}): Promise<AuditPage> {
    return this.call('GET', '/internal/admin/v1/audit-trail', { query: { ...filter } });
  }

  /** Verifies the audit trail's hash chain. */
  verifyAuditTrail(): Promise<AuditVerification> {
    return this.call('GET', '/internal/admin/v1/audit-trail/verify');
  }
}
