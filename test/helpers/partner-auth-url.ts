import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { createAuthUrlHandler } from '../../sdk/index.ts';

/** A partner's auth_url answering through the SDK handler: approve, decline, or too late. */
export class PartnerAuthUrl {
  behaviour: 'approve' | 'decline' | 'late' = 'approve';
  servicePublicKey = '';
  readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  traceparents: (string | undefined)[] = [];
  private constructor(private readonly server: http.Server, readonly url: string) {}

  static async start(): Promise<PartnerAuthUrl> {
    let self: PartnerAuthUrl | null = null;
    const server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      self!.traceparents.push(req.headers.traceparent as string | undefined);
      const handler = createAuthUrlHandler({
        partnerPrivateKey: self!.keys.privateKey, servicePublicKey: self!.servicePublicKey,
        decide: async () => {
          if (self!.behaviour === 'late') await new Promise((ok) => setTimeout(ok, 600));
          return self!.behaviour === 'decline' ? { approved: false, declineReason: 'OVER_BUDGET' } : { approved: true };
        },
      });
      const answer = await handler(Buffer.concat(chunks).toString('utf8'));
      if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    self = new PartnerAuthUrl(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth`);
    return self;
  }

  get publicKeyBase64(): string {
    return this.keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }
}
