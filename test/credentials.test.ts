import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { SmtpSink } from './helpers/smtp-sink.ts';
import { rawRequest } from './helpers/raw-http.ts';

const SETTINGS = '/open-api/partner/v1/settings';

describe('one-time credential retrieval (4.1, D14)', () => {
  let svc: TestService;

  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  /** Creates a link and reads the extract key from the mail outbox, as the partner reads the email. */
  async function linkFor(partnerId: string, retrievalIp: string) {
    const link = await svc.admin.createCredentialLink({ partnerId, email: 'secops@partner.example', retrievalIp });
    const [mail] = await svc.db.query<{ body: string; recipient: string; transport: string }>(
      `SELECT body, recipient, transport FROM outbox_mail ORDER BY created_at DESC LIMIT 1`,
    );
    assert.equal(mail.recipient, 'secops@partner.example');
    assert.equal(mail.transport, 'OUTBOX');
    const key = /extractSecretKey: ([A-Za-z0-9]+)/.exec(mail.body)![1];
    assert.ok(mail.body.includes(link.extractUrl));
    assert.ok(link.extractUrl.endsWith('/internal/open-api/v1/secret-extract/'));
    return { link, key, path: new URL(link.extractUrl).pathname + key };
  }

  it('first call returns working credentials; the second call fails with SECRET_EXTRACT_INVALID', async () => {
    const { partner, client: oldClient } = await svc.newPartner();
    const { key, path } = await linkFor(partner.partnerId, '127.0.0.1');
    const first = await rawRequest(svc.baseUrl, { method: 'GET', path });
    assert.equal(first.status, 200);
    assert.equal(first.body.code, 'SYS_SUCCESS');
    // Review h-attack2: the answer carrying the secretKey had no cache directive (only
    // retrieve-secure-card had one); a browser or proxy must not keep it.
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.equal(first.headers['x-content-type-options'], 'nosniff');
    const data = first.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['apiKey', 'expireTime', 'extractSecretKey', 'extractUrl', 'howToUse', 'notes', 'secretKey']);
    assert.match(data.apiKey, /^[0-9a-f]{32}$/);
    assert.match(data.secretKey, /^[A-Za-z0-9]{32}$/);
    assert.equal(data.extractSecretKey, key);
    assert.match(data.expireTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // The new credentials sign calls; the earlier ones stop working.
    const fresh = svc.clientFor({ apiKey: data.apiKey, secretKey: data.secretKey });
    assert.equal((await fresh.partner.settings()).partnerId, partner.partnerId);
    assert.equal((await oldClient.http.raw('GET', SETTINGS)).envelope.code, 'DAPI_API_KEY_INVALID');

    const second = await rawRequest(svc.baseUrl, { method: 'GET', path });
    assert.equal(second.body.code, 'SECRET_EXTRACT_INVALID');
    assert.equal(second.body.data, null);
  });

  it('a call from another IP fails with DAPI_IP_NOT_ALLOWED and does not consume the link', async () => {
    const { partner } = await svc.newPartner();
    const { path } = await linkFor(partner.partnerId, '10.1.2.3');
    const res = await rawRequest(svc.baseUrl, { method: 'GET', path });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'DAPI_IP_NOT_ALLOWED');
    assert.equal(res.body.data, null);
    const [link] = await svc.db.query<{ consumed_at: Date | null }>('SELECT consumed_at FROM credential_links WHERE partner_id = $1', [partner.partnerId]);
    assert.equal(link.consumed_at, null);
  });

  it('the extract key is in no log line: neither a refused call (the link stays valid) nor the one that uses it (D14, D54)', async () => {
    // Review rvC: the access log wrote the request path, which carries the one-time key; after a
    // call from the wrong address the link is still valid, so whoever reads the logs held it.
    const { partner } = await svc.newPartner();
    const refused = await linkFor(partner.partnerId, '10.1.2.3');
    assert.equal((await rawRequest(svc.baseUrl, { method: 'GET', path: refused.path })).body.code, 'DAPI_IP_NOT_ALLOWED');
    const used = await linkFor((await svc.newPartner()).partner.partnerId, '127.0.0.1');
    assert.equal((await rawRequest(svc.baseUrl, { method: 'GET', path: used.path })).body.code, 'SYS_SUCCESS');
    const lines = svc.logs.join('');
    assert.ok(lines.includes('/internal/open-api/v1/secret-extract/[redacted]'), 'the calls are logged, without their key');
    for (const key of [refused.key, used.key]) assert.ok(!lines.includes(key), 'the extract key is not in the log');
  });

  it('an expired link fails with SECRET_EXTRACT_EXPIRED and issues nothing', async () => {
    const { partner, client } = await svc.newPartner();
    const { path } = await linkFor(partner.partnerId, '127.0.0.1');
    svc.clock.advance(svc.config.credentialLinkTtlMs + 1);
    try {
      const res = await rawRequest(svc.baseUrl, { method: 'GET', path });
      assert.equal(res.body.code, 'SECRET_EXTRACT_EXPIRED');
      assert.equal(res.body.data, null);
    } finally {
      svc.clock.advance(-(svc.config.credentialLinkTtlMs + 1));
    }
    // Credentials unchanged.
    assert.equal((await client.http.raw('GET', SETTINGS)).envelope.code, 'SYS_SUCCESS');
  });

  it('an unknown key fails with SECRET_EXTRACT_INVALID; the key is stored only as a hash', async () => {
    const res = await rawRequest(svc.baseUrl, { method: 'GET', path: '/internal/open-api/v1/secret-extract/NoSuchKey123' });
    assert.equal(res.body.code, 'SECRET_EXTRACT_INVALID');
    const { partner } = await svc.newPartner();
    const { key } = await linkFor(partner.partnerId, '127.0.0.1');
    const rows = await svc.db.query<{ h: string }>('SELECT extract_key_hash AS h FROM credential_links');
    assert.ok(rows.every((r) => r.h !== key && /^[0-9a-f]{64}$/.test(r.h)));
  });

  it('production creates partners without credentials; they arrive only through the link, by email only', async () => {
    const smtp = await SmtpSink.start();
    const prod = await startService({ env: { CARDSVC_ENV: 'production', SMTP_URL: smtp.url } });
    try {
      const created = await prod.admin.createPartner({ name: 'prod-partner', ipWhitelist: { api: ['127.0.0.1'] } });
      assert.equal(created.apiKey, null);
      assert.equal(created.secretKey, null);
      const link = await prod.admin.createCredentialLink({ partnerId: created.partnerId, email: 'ops@p.example', retrievalIp: '127.0.0.1' });
      const message = smtp.messages.join('\n').replace(/=\r\n/g, '');
      const key = /extractSecretKey: ([A-Za-z0-9]+)/.exec(message)![1];
      // Issue 13: the database keeps no part of the sent message, and operators read nothing secret.
      const rows = await prod.db.query<{ body: string; transport: string }>('SELECT body, transport FROM outbox_mail WHERE recipient = $1', ['ops@p.example']);
      assert.deepEqual(rows.map((r) => [r.body, r.transport]), [['', 'SMTP']]);
      const outbox = await rawRequest(prod.baseUrl, { method: 'GET', path: '/internal/admin/v1/outbox-mail', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(JSON.stringify(outbox.body).includes(key), false, 'the admin outbox never shows the extract key');
      const res = await rawRequest(prod.baseUrl, { method: 'GET', path: new URL(link.extractUrl).pathname + key });
      assert.equal(res.body.code, 'SYS_SUCCESS');
      const client = prod.clientFor(res.body.data);
      assert.equal((await client.partner.settings()).partnerId, created.partnerId);
    } finally {
      await prod.close();
      await smtp.close();
    }
  });

  it('production without a mail transport refuses to create a credential link and stores nothing (issue 13, D54)', async () => {
    const prod = await startService({ env: { CARDSVC_ENV: 'production' } });
    try {
      const created = await prod.admin.createPartner({ name: 'prod-no-smtp', ipWhitelist: { api: ['127.0.0.1'] } });
      const before = await prod.db.query<{ n: number }>('SELECT (SELECT count(*) FROM outbox_mail)::int + (SELECT count(*) FROM credential_links)::int AS n');
      await assert.rejects(prod.admin.createCredentialLink({ partnerId: created.partnerId, email: 'ops@p.example', retrievalIp: '127.0.0.1' }),
        (err: { code?: string }) => err.code === 'MAIL_TRANSPORT_REQUIRED');
      const after = await prod.db.query<{ n: number }>('SELECT (SELECT count(*) FROM outbox_mail)::int + (SELECT count(*) FROM credential_links)::int AS n');
      assert.equal(after[0].n, before[0].n, 'no link and no mail written');
    } finally {
      await prod.close();
    }
  });

  it('secret keys are stored encrypted: the database never holds a plaintext secret key (D8)', async () => {
    const { partner } = await svc.newPartner();
    const rows = await svc.db.query<{ secret_key_enc: string }>('SELECT secret_key_enc FROM partners WHERE partner_id = $1', [partner.partnerId]);
    assert.ok(rows[0].secret_key_enc.startsWith('v1.'));
    assert.ok(!rows[0].secret_key_enc.includes(partner.secretKey!));
  });
});
