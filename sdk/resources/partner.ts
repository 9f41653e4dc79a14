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
   * Sets the IANA time zone of your velocity limits (UTC by default). Daily, monthly, quarterly and
   * yearly periods then follow local time, across daylight-saving changes; each period switches at
   * its next boundary, so usage already counted is neither split nor reset. An unknown zone is
   * DAPI_PARAM_INVALID.
   * @example const settings = await client.partner.setTimeZone('Asia/Hong_Kong');
   */
  setTimeZone(timeZone: string, options?: CallOptions): Promise<PartnerSettings> {
    return this.http.call('POST', '/open-api/partner/v1/settings/time-zone', { body: { timeZone } }, options);
  }

  /**
   * The service RSA public key your auth_url verifies requests with and encrypts answers to (5.6, D37).
   * @example const { publicKey, keyId } = await client.partner.servicePublicKey();
   */
  servicePublicKey(options?: CallOptions): Promise<{ keyId: string; publicKey: string; algorithm: string; signatureAlgorithm: string; encryption: string }> {
    return this.http.call('GET', '/open-api/v1/service-public-key', {}, options);
  }
}
