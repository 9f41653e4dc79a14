import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { decimal, expectCode } from './helpers/companies.ts';
import { assertNoCardDataLeak, cardWorld, issueCard, plaintextOf, ref, runJobs, type CardWorld } from './helpers/cards.ts';
import { decryptSecureCard, type Card } from '../sdk/index.ts';

/**
 * D26: plaintext PAN and CVV2 never reach the database (outside the AES-GCM ciphertext), a log
 * line, an error body or an event. This file drives every card route, the failures included,
 * then scans every text-like column of every table and every log line of the run; negative
 * controls prove the scan would see a leak.
 */

describe('card data safety (D26)', () => {
  let svc: TestService;
  const worlds: CardWorld[] = [];
  const cards: { world: CardWorld; card: Card; encrypted: string[] }[] = [];

  before(async () => {
    svc = await startService({ env: { LOG_LEVEL: 'debug' } });
    worlds.push(await cardWorld(svc, { pciCertified: true }));
    worlds.push(await cardWorld(svc, { pciCertified: true, secureCardIvMode: 'PER_FIELD' }));
    worlds.push(await cardWorld(svc));
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('drives every card route, successes and failures', async () => {
    for (const world of worlds) {
      for (const profile of ['sbx-visa-shared', 'sbx-visa-dedicated', 'sbx-mc-shared', 'sbx-mc-dedicated']) {
        cards.push({ world, card: await issueCard(svc, world, { profile }), encrypted: [] });
      }
      cards.push({ world, card: await issueCard(svc, world, { company: true, cardholderName: 'Acme Fleet' }), encrypted: [] });
      // A rejected application and one that fails synchronously.
      await world.client.cards.apply({
        organizationId: world.org.organizationId, cardApplyRef: ref(), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER',
        subjectId: world.employee.customerId, cardholderName: 'Reject Me',
      });
      await expectCode(world.client.cards.apply({
        organizationId: world.org.organizationId, cardApplyRef: ref(), cardProfileId: 'nope', subjectType: 'CUSTOMER', subjectId: world.employee.customerId,
      }), 'CARD_PROFILE_INVALID');
    }
    await runJobs(svc);
    for (const entry of cards) {
      const { world, card } = entry;
      const c = world.client.cards;
      await c.query(card.cardId);
      await c.list({ organizationId: world.org.organizationId });
      if (world.partner.pciCertified) {
        for (let i = 0; i < 2; i++) {
          const data = await c.retrieveSecureCard(card.cardId);
          entry.encrypted.push(data.encryptedPan, data.encryptedCvv2, data.encryptedExpireDate);
          const plain = decryptSecureCard(world.partner.secretKey!, data);
          assert.ok(plain.pan.endsWith(card.panLast4));
        }
      } else {
        await expectCode(c.retrieveSecureCard(card.cardId), 'PCI_NOT_CERTIFIED');
      }
      if (card.balanceMode === 'DEDICATED' && card.cardholderName) {
        await c.openVa(card.cardId, ['USD', 'HKD']);
        await world.client.sandbox.deposit({ subjectType: 'CARD', subjectId: card.cardId, currency: 'USD', amount: decimal('10') });
        await c.transfer({ organizationId: world.org.organizationId, cardId: card.cardId, direction: 'CARD_TO_POOL', currency: 'USD', amount: decimal('5'), externalTranId: ref('tx') });
        await expectCode(c.transfer({ organizationId: world.org.organizationId, cardId: card.cardId, direction: 'CARD_TO_POOL', currency: 'USD', amount: decimal('500'), externalTranId: ref('tx') }), 'INSUFFICIENT_BALANCE');
        await c.depositAccounts('CARD', card.cardId);
      } else if (card.balanceMode === 'SHARED') {
        await expectCode(c.openVa(card.cardId, ['USD']), 'CARD_NOT_DEDICATED');
      }
      await c.block(card.cardId);
      if (world.partner.pciCertified) await expectCode(c.retrieveSecureCard(card.cardId), 'CARD_INVALID');
      await c.unblock(card.cardId);
    }
    // Events through the partner's event log, as a webhook consumer would read them.
    for (const world of worlds) {
      const page = await world.client.events.listEvents({ pageSize: 100 });
      assert.ok(page.result.some((e) => e.eventType === 'CARD_CREATED'));
      assert.ok(page.result.some((e) => e.eventType === 'CARD_REJECTED'));
    }
    // Cancel the last card of each partner (dedicated balance sweep included).
    for (const world of worlds) await world.client.cards.cancel(cards.filter((x) => x.world === world)[1].card.cardId);
  });

  it('no plaintext PAN or CVV2 in any database column, event or log line of the run', async () => {
    const secrets = await Promise.all(cards.map(async ({ world, card, encrypted }) => ({ ...(await plaintextOf(svc, world.partner.partnerId, card.cardId)), encrypted })));
    assert.equal(new Set(secrets.map((s) => s.pan)).size, secrets.length, 'PANs are unique');
    const scanned = await assertNoCardDataLeak(svc, secrets);
    assert.ok(scanned.columns > 50 && scanned.logLines > 100, `scanned ${scanned.columns} columns and ${scanned.logLines} log lines`);
    // Event payloads carry the first 6 and last 4 only.
    const payloads = await svc.db.query<{ payload: string }>(`SELECT payload FROM events WHERE event_type LIKE 'CARD_%'`);
    assert.ok(payloads.length >= cards.length);
    for (const { payload } of payloads) assert.ok(!/"(pan|cvv2?|expireDate|expiry)"/i.test(payload), 'no card-data field in an event');
  });

  it('negative controls: the scan does see a PAN planted in a table or a log line', async () => {
    const { world, card } = cards[0];
    const secret = await plaintextOf(svc, world.partner.partnerId, card.cardId);
    await svc.db.query(`INSERT INTO outbox_mail (mail_id, recipient, subject, body, transport) VALUES ('leak-probe', 'x@example.com', 'probe', $1, 'OUTBOX')`,
      [`card ${secret.pan.replace(/(\d{4})(?=\d)/g, '$1 ')}`]);
    try {
      await assert.rejects(assertNoCardDataLeak(svc, [secret]), /outbox_mail\.body/);
    } finally {
      await svc.db.query(`DELETE FROM outbox_mail WHERE mail_id = 'leak-probe'`);
    }
    await svc.db.query(`INSERT INTO outbox_mail (mail_id, recipient, subject, body, transport) VALUES ('leak-probe', 'x@example.com', 'probe', $1, 'OUTBOX')`,
      [JSON.stringify({ cvv2: secret.cvv2 })]);
    try {
      await assert.rejects(assertNoCardDataLeak(svc, [secret]), /outbox_mail\.body/);
    } finally {
      await svc.db.query(`DELETE FROM outbox_mail WHERE mail_id = 'leak-probe'`);
    }
    svc.logs.push(`{"msg":"oops","pan":"${secret.pan}"}`);
    try {
      await assert.rejects(assertNoCardDataLeak(svc, [secret]), /log line holds a PAN/);
    } finally {
      svc.logs.pop();
    }
    svc.logs.push(`{"msg":"oops","cvv2":"${secret.cvv2}"}`);
    try {
      await assert.rejects(assertNoCardDataLeak(svc, [secret]), /cvv/);
    } finally {
      svc.logs.pop();
    }
    await assertNoCardDataLeak(svc, [secret]);
  });
});
