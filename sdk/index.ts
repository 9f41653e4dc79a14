import { SignedHttpClient, type ClientOptions } from './client.ts';
import { PartnerResource } from './resources/partner.ts';
import { SandboxResource } from './resources/sandbox.ts';

export * from './client.ts';
export * from './admin.ts';
export type { PartnerSettings } from './resources/partner.ts';

/**
 * The partner client: one resource per business domain, each method one route (see sdk/README.md).
 * @example
 * const client = new CardServiceClient({ baseUrl, apiKey, secretKey });
 * const settings = await client.partner.settings();
 */
export class CardServiceClient {
  readonly http: SignedHttpClient;
  readonly partner: PartnerResource;
  readonly sandbox: SandboxResource;

  constructor(options: ClientOptions) {
    this.http = new SignedHttpClient(options);
    this.partner = new PartnerResource(this.http);
    this.sandbox = new SandboxResource(this.http);
  }
}
