import { CardServiceError, parseJsonLossless, stringifyJsonLossless, encodeQuery, type Envelope, type QueryValue } from './client.ts';

export interface CreatePartnerInput {
  name: string;
  pciCertified?: boolean;
  webhookUrl?: string | null;
  authUrl?: string | null;
  externalPublicKey?: string | null;
  ipWhitelist?: { api?: string[]; webhook?: string[]; auth?: string[]; retrieval?: string[] };
  secureCardIvMode?: 'SHARED' | 'PER_FIELD';
}

export interface CreatedPartner {
  partnerId: string;
  apiKey: string | null;
  secretKey: string | null;
  [field: string]: unknown;
}

/** Operator client for the admin API (D13), authenticated with the bearer ADMIN_TOKEN. */
export class AdminClient {
  constructor(private readonly baseUrl: string, private readonly token: string) {}

  async raw<T = unknown>(method: 'GET' | 'POST', path: string, options: { query?: Record<string, QueryValue>; body?: unknown } = {}) {
    const query = options.query ? encodeQuery(options.query) : '';
    const res = await fetch(this.baseUrl + path + (query ? `?${query}` : ''), {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'POST' ? stringifyJsonLossless(options.body ?? {}) : undefined,
    });
    const text = await res.text();
    return { status: res.status, envelope: parseJsonLossless(text) as Envelope<T> };
  }

  async call<T = unknown>(method: 'GET' | 'POST', path: string, options: { query?: Record<string, QueryValue>; body?: unknown } = {}): Promise<T> {
    const { status, envelope } = await this.raw<T>(method, path, options);
    if (envelope.code !== 'SYS_SUCCESS') throw new CardServiceError(envelope.code, envelope.message ?? '', status, envelope.data, envelope);
    return envelope.data;
  }

  createPartner(input: CreatePartnerInput): Promise<CreatedPartner> {
    return this.call('POST', '/internal/admin/v1/partners', { body: input });
  }

  updatePartner(partnerId: string, changes: Partial<CreatePartnerInput> & { status?: 'ACTIVE' | 'DISABLED' }) {
    return this.call('POST', '/internal/admin/v1/partners/update', { body: { partnerId, ...changes } });
  }

  createCredentialLink(input: { partnerId: string; email: string; retrievalIp: string }) {
    return this.call<{ linkId: string; expireTime: string; extractUrl: string }>('POST', '/internal/admin/v1/credential-links', { body: input });
  }

  /** Issues a card network ingress key (D40); the secret is in this answer only. */
  createNetworkKey(input: { name: string; ipAllowlist?: string[] }) {
    return this.call<{ networkKeyId: string; name: string; apiKey: string; secretKey: string; ipAllowlist: string[]; status: string; createTime: string }>(
      'POST', '/internal/admin/v1/network-keys', { body: input });
  }
}
