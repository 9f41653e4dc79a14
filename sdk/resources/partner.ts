import type { SignedHttpClient } from '../client.ts';

export interface PartnerSettings {
  partnerId: string;
  name: string;
  apiKey: string | null;
  pciCertified: boolean;
  webhookUrl: string | null;
  authUrl: string | null;
  externalPublicKey: string | null;
  ipWhitelist: { api: string[]; webhook: string[]; auth: string[]; retrieval: string[] };
  secureCardIvMode: 'SHARED' | 'PER_FIELD';
  status: 'ACTIVE' | 'DISABLED';
  createTime: string;
  modifyTime: string;
}

export class PartnerResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * The calling partner's own settings.
   * @example const settings = await client.partner.settings();
   */
  settings(): Promise<PartnerSettings> {
    return this.http.call('GET', '/open-api/partner/v1/settings');
  }

  /**
   * The service RSA public key your auth_url verifies requests with and encrypts answers to (5.6, D37).
   * @example const { publicKey, keyId } = await client.partner.servicePublicKey();
   */
  servicePublicKey(): Promise<{ keyId: string; publicKey: string; algorithm: string; signatureAlgorithm: string; encryption: string }> {
    return this.http.call('GET', '/open-api/v1/service-public-key');
  }
}
