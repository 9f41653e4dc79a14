import type { LosslessNumber } from 'lossless-json';
import type { SignedHttpClient } from '../client.ts';

export class SandboxResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Stores an exact decimal and reads it back (D4).
   * @example await client.sandbox.decimalEcho(decimal('0.123456789012345678'));
   */
  decimalEcho(amount: LosslessNumber | number): Promise<{ probeId: string; amount: LosslessNumber | number }> {
    return this.http.call('POST', '/open-api/sandbox/v1/decimal-echo', { body: { amount } });
  }
}
