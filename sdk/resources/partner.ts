import type { Static } from 'typebox';
import type { CallOptions, SignedHttpClient } from '../client.ts';
import type { PartnerView } from '../contract/partners.ts';

/** The partner's settings (the service's PartnerView schema, sdk/contract/partners.ts). */
export type PartnerSettings = Static<typeof PartnerView>;

export class PartnerResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * The calling partner's own settings.
   * @example const settings = await client.partner.settings();
   */
  settings(options?: CallOptions): Promise<PartnerSettings> {
    return this.http.call('GET', '/open-api/partner/v1/settings', {}, options);
  }

  /**
   * The service RSA public key your auth_url verifies requests with and encrypts answers to (5.6, D37).
   * @example const { publicKey, keyId } = await client.partner.servicePublicKey();
   */
  servicePublicKey(options?: CallOptions): Promise<{ keyId: string; publicKey: string; algorithm: string; signatureAlgorithm: string; encryption: string }> {
    return this.http.call('GET', '/open-api/v1/service-public-key', {}, options);
  }
}
