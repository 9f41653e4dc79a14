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
}
