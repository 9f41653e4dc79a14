import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, approvedEmployee, decimal, expectCode, money, newCompany } from './helpers/companies.ts';

/** An amount from a response as a plain number (tests compare small, exact values). */
const amt = (value: unknown): number => Number(money(value));
import { assertNoCardDataLeak, cardWorld, footprint, issueCard, luhnOk, outboxEvents, plaintextOf, ref, type CardWorld } from './helpers/cards.ts';
import { CardServiceError, decryptSecureCard, type Card, type EncryptedSecureCard } from '../sdk/index.ts';

/**
 * Cards after issuance: reads (2.5, D25, D43), block/unblock/cancel (D25, D20), secure card data
 * (2.6, D27), receiving accounts (4.4, D28, D42), card deposits and pool transfers (D29, D40, D48).
 * The file ends with the plaintext scan of D26 over everything it did.
 */

describe('cards after issuance', () => {
  let svc: TestService;
  let w: CardWorld;
  /** Cards whose plaintext the final scan looks for, with ciphertexts seen by the partner. */
  const issued: { partnerId: string; cardId: string; encrypted: string[] }[] = [];

  const remember = (partnerId: string, card: Card) => {
    issued.push({ partnerId, cardId: card.cardId, encrypted: [] });
    return card;
  };

  before(async () => {
    svc = await startService();
    w = await cardWorld(svc, { pciCertified: true });
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  /** Runs the call after taking the footprint: it must fail with `code` and change nothing. */
  async function unchanged<T>(call: () => Promise<T>, code: string, messageIncludes?: string) {
    const before = await footprint(svc);
    const err = await expectCode(call(), code, messageIncludes);
    assert.deepEqual(await footprint(svc), before, `nothing changed after ${code}`);
    return err;
  }

  describe('reads (2.5, D25, D43)', () => {
    it('the single-card query returns the 2.5 fields; unknown ids are CARD_INVALID; the 20-character bound holds', async () => {
      const card = remember(w.partner.partnerId, await issueCard(svc, w));
      for (const field of ['cardId', 'panFirst6', 'panLast4', 'organizationId', 'subjectType', 'subjectId', 'cardProfileId', 'cardNetwork', 'currency', 'status']) {
        assert.ok(field in card, field);
      }
      assert.ok(card.cardId.length <= 20);
      await expectCode(w.client.cards.query('cd-unknown'), 'CARD_INVALID');
      await expectCode(w.client.cards.query('c'.repeat(21)), 'DAPI_PARAM_INVALID', 'cardId');
    });

    it('the list filters by subject and status, pages newest first, and shows every status', async () => {
      const company = await newCompany(w.client);
      const ada = await approvedEmployee(w.client, company.organizationId);
      const bob = await approvedEmployee(w.client, company.organizationId, { firstName: 'Bob', lastName: 'Brown' });
      const world = { ...w, org: company, employee: ada };
      const a1 = remember(w.partner.partnerId, await issueCard(svc, world));
      const a2 = remember(w.partner.partnerId, await issueCard(svc, world, { profile: 'sbx-mc-dedicated' }));
      const b1 = remember(w.partner.partnerId, await issueCard(svc, { ...world, employee: bob }));
      const c1 = remember(w.partner.partnerId, await issueCard(svc, world, { company: true, cardholderName: 'Acme Travel' }));
      await w.client.cards.block(a2.cardId);
      await w.client.cards.cancel(b1.cardId);

      const all = await w.client.cards.list({ organizationId: company.organizationId });
      assert.equal(all.total, 4);
      assert.deepEqual(all.result.map((c) => c.cardId), [c1.cardId, b1.cardId, a2.cardId, a1.cardId], 'newest first');
      assert.deepEqual(all.result.map((c) => c.status), ['ACTIVE', 'CANCELLED', 'BLOCKED', 'ACTIVE']);
      const ofAda = await w.client.cards.list({ organizationId: company.organizationId, subjectType: 'CUSTOMER', subjectId: ada.customerId });
      assert.deepEqual(ofAda.result.map((c) => c.cardId), [a2.cardId, a1.cardId]);
      const companyCards = await w.client.cards.list({ organizationId: company.organizationId, subjectType: 'ORGANIZATION' });
      assert.deepEqual(companyCards.result.map((c) => c.cardId), [c1.cardId]);
      const blocked = await w.client.cards.list({ organizationId: company.organizationId, status: 'BLOCKED' });
      assert.deepEqual(blocked.result.map((c) => c.cardId), [a2.cardId]);
      const page2 = await w.client.cards.list({ organizationId: company.organizationId, page: 2, pageSize: 3 });
      assert.deepEqual([page2.page, page2.pageSize, page2.total, page2.result.length], [2, 3, 4, 1]);
      assert.equal(page2.result[0].cardId, a1.cardId);
      assert.equal((await w.client.cards.query(b1.cardId)).status, 'CANCELLED', 'a cancelled card stays readable (D43)');

      await expectCode(w.client.cards.list({ organizationId: 'org-unknown' }), 'ORGANIZATION_INVALID');
      await expectCode(w.client.cards.list({ organizationId: company.organizationId, pageSize: 101 }), 'DAPI_PARAM_INVALID', 'pageSize');
      await expectCode(w.client.cards.list({ organizationId: company.organizationId, page: 0 }), 'DAPI_PARAM_INVALID', 'page');
      await expectCode(w.client.cards.list({ organizationId: company.organizationId, status: 'LOST' as never }), 'DAPI_PARAM_INVALID', 'status');
    });
  });

  describe('block, unblock, cancel (D25)', () => {
    it('block and unblock toggle the status, are idempotent, and emit CARD_STATUS_CHANGED on a real change', async () => {
      const card = remember(w.partner.partnerId, await issueCard(svc, w));
      const blocked = await w.client.cards.block(card.cardId);
      assert.equal(blocked.status, 'BLOCKED');
      assert.equal((await w.client.cards.block(card.cardId)).status, 'BLOCKED');
      assert.equal((await w.client.cards.query(card.cardId)).status, 'BLOCKED');
      assert.equal((await w.client.cards.unblock(card.cardId)).status, 'ACTIVE');
      assert.equal((await w.client.cards.unblock(card.cardId)).status, 'ACTIVE');
      const events = await outboxEvents(svc, 'CARD_STATUS_CHANGED', card.cardId);
      assert.deepEqual(events.map((e) => [e.data.previousStatus, e.data.status]), [['ACTIVE', 'BLOCKED'], ['BLOCKED', 'ACTIVE']]);
    });

    it('unblock is refused with CAPABILITY_FROZEN while card management is frozen (company CARD_FROZEN, employee ACCOUNT_FROZEN); block is not', async () => {
      const company = await newCompany(w.client);
      const employee = await approvedEmployee(w.client, company.organizationId);
      const world = { ...w, org: company, employee };
      const card = remember(w.partner.partnerId, await issueCard(svc, world));
      const companyCard = remember(w.partner.partnerId, await issueCard(svc, world, { company: true, cardholderName: 'Acme Ops' }));
      await w.client.cards.block(card.cardId);
      await w.client.cards.block(companyCard.cardId);

      await w.client.organizations.updateRestrictions(company.organizationId, { addRestrictions: ['CARD_FROZEN'] });
      const err = await unchanged(() => w.client.cards.unblock(card.cardId), 'CAPABILITY_FROZEN');
      assert.equal((err.data as { errorCode: string }).errorCode, 'CARD_FROZEN');
      await unchanged(() => w.client.cards.unblock(companyCard.cardId), 'CAPABILITY_FROZEN');
      await w.client.organizations.updateRestrictions(company.organizationId, { removeRestrictions: ['CARD_FROZEN'] });

      await w.client.customers.updateRestrictions(employee.customerId, { addRestrictions: ['ACCOUNT_FROZEN'] });
      const err2 = await unchanged(() => w.client.cards.unblock(card.cardId), 'CAPABILITY_FROZEN');
      assert.equal((err2.data as { errorCode: string }).errorCode, 'ACCOUNT_FROZEN');
      // D45: the company card does not depend on its custodian's restrictions.
      assert.equal((await w.client.cards.unblock(companyCard.cardId)).status, 'ACTIVE');
      assert.equal((await w.client.cards.block(companyCard.cardId)).status, 'BLOCKED', 'blocking needs no capability');
      await w.client.customers.updateRestrictions(employee.customerId, { removeRestrictions: ['ACCOUNT_FROZEN'] });
      assert.equal((await w.client.cards.unblock(card.cardId)).status, 'ACTIVE');
    });

    it('cancel is final: block and unblock of a cancelled card are CARD_INVALID; cancel again answers it unchanged', async () => {
      const card = remember(w.partner.partnerId, await issueCard(svc, w));
      assert.equal((await w.client.cards.cancel(card.cardId)).status, 'CANCELLED');
      await unchanged(() => w.client.cards.block(card.cardId), 'CARD_INVALID');
      await unchanged(() => w.client.cards.unblock(card.cardId), 'CARD_INVALID');
      assert.equal((await w.client.cards.cancel(card.cardId)).status, 'CANCELLED');
      await unchanged(() => w.client.cards.block('cd-unknown'), 'CARD_INVALID');
      await unchanged(() => w.client.cards.cancel('cd-unknown'), 'CARD_INVALID');
      await expectCode(w.client.cards.block('c'.repeat(33)), 'DAPI_PARAM_INVALID', 'cardId');
    });

    it('terminating an employee cancels the employee\'s cards (D16)', async () => {
      const leaver = await approvedEmployee(w.client, w.org.organizationId);
      const card = remember(w.partner.partnerId, await issueCard(svc, { ...w, employee: leaver }));
      await w.client.customers.terminate(leaver.customerId);
      assert.equal((await w.client.cards.query(card.cardId)).status, 'CANCELLED');
    });
  });

  describe('retrieve-secure-card (2.6, D27)', () => {
    it('decrypts with the documented algorithm: Luhn PAN matching first6/last4, mm/yy expiry, CVV2 stable across calls with fresh IVs', async () => {
      const card = await issueCard(svc, w);
      const entry = { partnerId: w.partner.partnerId, cardId: card.cardId, encrypted: [] as string[] };
      issued.push(entry);
      const first = await w.client.cards.retrieveSecureCard(card.cardId);
      const second = await w.client.cards.retrieveSecureCard(card.cardId);
      entry.encrypted.push(first.encryptedPan, first.encryptedCvv2, second.encryptedPan, second.encryptedCvv2);
      assert.equal(first.cardId, card.cardId);
      assert.equal(Buffer.from(first.iv, 'base64').length, 12);
      assert.notEqual(first.iv, second.iv, 'a fresh IV per call');
      assert.notEqual(first.encryptedCvv2, second.encryptedCvv2);
      assert.equal(first.cvv2Iv, undefined, 'SHARED mode: one iv');

      const a = decryptSecureCard(w.partner.secretKey!, first);
      const b = decryptSecureCard(w.partner.secretKey!, second);
      assert.ok(/^\d{16}$/.test(a.pan) && luhnOk(a.pan), 'PAN is 16 digits and passes Luhn');
      assert.ok(a.pan.startsWith(card.panFirst6) && a.pan.endsWith(card.panLast4), 'PAN matches panFirst6/panLast4');
      const now = new Date(svc.clock.now());
      const months = now.getUTCFullYear() * 12 + now.getUTCMonth() + 36;
      const expected = `${String((months % 12) + 1).padStart(2, '0')}/${String(Math.floor(months / 12) % 100).padStart(2, '0')}`;
      assert.equal(a.expireDate, expected, 'expiry mm/yy, 36 months after issue');
      assert.ok(/^\d{3}$/.test(a.cvv2), 'CVV2 is 3 digits');
      assert.ok(a.pan === b.pan && a.cvv2 === b.cvv2 && a.expireDate === b.expireDate, 'stable across calls');
      assert.deepEqual(await plaintextOf(svc, w.partner.partnerId, card.cardId), { pan: a.pan, cvv2: a.cvv2, expireDate: a.expireDate });
      // Java layout: Base64(ciphertext || 16-byte tag).
      assert.equal(Buffer.from(first.encryptedPan, 'base64').length, 16 + 16);
      assert.equal(Buffer.from(first.encryptedExpireDate, 'base64').length, 5 + 16);
    });

    it('is never cached: Cache-Control no-store', async () => {
      const card = remember(w.partner.partnerId, await issueCard(svc, w));
      const res = await w.client.http.raw<EncryptedSecureCard>('POST', '/open-api-corp/card/v1/retrieve-secure-card', { body: { cardId: card.cardId } });
      assert.equal(res.envelope.code, 'SYS_SUCCESS');
      assert.equal(res.headers.get('cache-control'), 'no-store');
      issued[issued.length - 1].encrypted.push(res.envelope.data.encryptedPan);
    });

    it('the PER_FIELD partner setting gives the CVV2 and the expiry their own IVs', async () => {
      await svc.admin.updatePartner(w.partner.partnerId, { secureCardIvMode: 'PER_FIELD' });
      try {
        const card = remember(w.partner.partnerId, await issueCard(svc, w));
        const data = await w.client.cards.retrieveSecureCard(card.cardId);
        assert.ok(data.cvv2Iv && data.expireDateIv);
        assert.equal(new Set([data.iv, data.cvv2Iv, data.expireDateIv]).size, 3);
        const plain = decryptSecureCard(w.partner.secretKey!, data);
        assert.ok(luhnOk(plain.pan) && plain.pan.endsWith(card.panLast4));
        issued[issued.length - 1].encrypted.push(data.encryptedPan);
      } finally {
        await svc.admin.updatePartner(w.partner.partnerId, { secureCardIvMode: 'SHARED' });
      }
    });

    it('PCI_NOT_CERTIFIED for a partner off the allowlist, even for its own active card', async () => {
      const plain = await cardWorld(svc);
      const card = remember(plain.partner.partnerId, await issueCard(svc, plain));
      await unchanged(() => plain.client.cards.retrieveSecureCard(card.cardId), 'PCI_NOT_CERTIFIED');
      await unchanged(() => plain.client.cards.retrieveSecureCard('cd-unknown'), 'PCI_NOT_CERTIFIED');
    });

    it('CARD_INVALID for a missing, blocked or cancelled card', async () => {
      await unchanged(() => w.client.cards.retrieveSecureCard('cd-unknown'), 'CARD_INVALID');
      const card = remember(w.partner.partnerId, await issueCard(svc, w));
      await w.client.cards.block(card.cardId);
      await unchanged(() => w.client.cards.retrieveSecureCard(card.cardId), 'CARD_INVALID');
      await w.client.cards.cancel(card.cardId);
      await unchanged(() => w.client.cards.retrieveSecureCard(card.cardId), 'CARD_INVALID');
      await expectCode(w.client.cards.retrieveSecureCard('c'.repeat(33)), 'DAPI_PARAM_INVALID', 'cardId');
    });
  });

  describe('open-va and deposit accounts (4.4, D28, D42)', () => {
    let dedicated: Card;
    let usdCompanyCard: Card;
    let usdWorld: CardWorld;

    before(async () => {
      dedicated = remember(w.partner.partnerId, await issueCard(svc, w, { profile: 'sbx-visa-dedicated' }));
      const usdCompany = await newCompany(w.client, { fundingCurrencies: ['USD'] });
      usdWorld = { ...w, org: usdCompany, employee: await approvedEmployee(w.client, usdCompany.organizationId) };
      usdCompanyCard = remember(w.partner.partnerId, await issueCard(svc, usdWorld, { profile: 'sbx-mc-dedicated' }));
    });

    it('DAPI_PARAM_INVALID for empty, duplicate or malformed currencies; UNSUPPORTED_CURRENCY for a well-formed other code', async () => {
      await unchanged(() => w.client.cards.openVa(dedicated.cardId, []), 'DAPI_PARAM_INVALID', 'fundingCurrencies');
      await unchanged(() => w.client.cards.openVa(dedicated.cardId, ['USD', 'USD']), 'DAPI_PARAM_INVALID', 'fundingCurrencies');
      await unchanged(() => w.client.cards.openVa(dedicated.cardId, ['usd']), 'DAPI_PARAM_INVALID', 'fundingCurrencies');
      await unchanged(() => w.client.cards.openVa(dedicated.cardId, ['']), 'DAPI_PARAM_INVALID', 'fundingCurrencies');
      await unchanged(() => w.client.cards.openVa(dedicated.cardId, ['US']), 'DAPI_PARAM_INVALID', 'fundingCurrencies');
      await unchanged(() => w.client.cards.openVa(dedicated.cardId, ['USD', 'EUR']), 'UNSUPPORTED_CURRENCY', 'EUR');
    });

    it('CARD_INVALID for a missing or not ACTIVE card; CARD_NOT_DEDICATED for a shared-balance card', async () => {
      await unchanged(() => w.client.cards.openVa('cd-unknown', ['USD']), 'CARD_INVALID');
      const blocked = remember(w.partner.partnerId, await issueCard(svc, w, { profile: 'sbx-visa-dedicated' }));
      await w.client.cards.block(blocked.cardId);
      await unchanged(() => w.client.cards.openVa(blocked.cardId, ['USD']), 'CARD_INVALID');
      const shared = remember(w.partner.partnerId, await issueCard(svc, w, { profile: 'sbx-visa-shared' }));
      await unchanged(() => w.client.cards.openVa(shared.cardId, ['USD']), 'CARD_NOT_DEDICATED');
    });

    it('CURRENCY_NOT_ALLOWED names the currency outside the company\'s list, and nothing is opened', async () => {
      await unchanged(() => w.client.cards.openVa(usdCompanyCard.cardId, ['USD', 'HKD']), 'CURRENCY_NOT_ALLOWED', 'HKD');
      assert.deepEqual(await w.client.cards.depositAccounts('CARD', usdCompanyCard.cardId), [], 'no partial opening');
    });

    it('SUBJECT_INVALID when the card has no cardholder name to name the account with', async () => {
      const nameless = remember(w.partner.partnerId, await issueCard(svc, w, { profile: 'sbx-visa-dedicated', company: true }));
      await unchanged(() => w.client.cards.openVa(nameless.cardId, ['USD']), 'SUBJECT_INVALID', 'cardholder');
    });

    it('opens one account per currency, readable through deposit-account; re-opening is idempotent', async () => {
      assert.equal(await w.client.cards.openVa(dedicated.cardId, ['USD']), null);
      const first = await w.client.cards.depositAccounts('CARD', dedicated.cardId);
      assert.deepEqual(first.map((a) => a.currency), ['USD']);
      assert.equal(await w.client.cards.openVa(dedicated.cardId, ['HKD', 'USD']), null);
      const both = await w.client.cards.depositAccounts('CARD', dedicated.cardId);
      assert.deepEqual(both.map((a) => a.currency).sort(), ['HKD', 'USD']);
      const usd = both.find((a) => a.currency === 'USD')!;
      assert.equal(usd.accountNumber, first[0].accountNumber, 're-open keeps the account');
      assert.match(usd.accountNumber, /^\d{12}$/);
      assert.equal(usd.accountName, 'ADA LOVELACE');
      assert.ok(usd.bankName && usd.bankCode);
      assert.equal(usd.status, 'ACTIVE');
      const before = await footprint(svc);
      await w.client.cards.openVa(dedicated.cardId, ['USD', 'HKD']);
      assert.deepEqual(await footprint(svc), before, 'idempotent re-open writes nothing');
      // The dedicated balances exist at zero from the moment they can receive money (D48).
      const balance = await w.client.funding.balance(w.org.organizationId);
      const mine = balance.cards.filter((c) => c.cardId === dedicated.cardId).map((c) => [c.currency, amt(c.available)]).sort();
      assert.deepEqual(mine, [['HKD', 0], ['USD', 0]]);
    });

    it('a company\'s deposit accounts: one per funding pool, stable across reads; unknown subjects are SUBJECT_INVALID', async () => {
      const first = await w.client.cards.depositAccounts('ORGANIZATION', w.org.organizationId);
      assert.deepEqual(first.map((a) => a.currency).sort(), ['HKD', 'USD']);
      assert.equal(first[0].accountName, w.org.organizationName);
      assert.deepEqual(await w.client.cards.depositAccounts('ORGANIZATION', w.org.organizationId), first);
      await expectCode(w.client.cards.depositAccounts('ORGANIZATION', 'org-unknown'), 'SUBJECT_INVALID');
      await expectCode(w.client.cards.depositAccounts('CARD', 'cd-unknown'), 'SUBJECT_INVALID');
      await expectCode(w.client.cards.depositAccounts('CUSTOMER' as never, w.employee.customerId), 'DAPI_PARAM_INVALID', 'subjectType');
    });

    it('a deposit to a card\'s receiving account (sandbox simulate/deposit) credits its dedicated balance through the ledger', async () => {
      const credited = await w.client.sandbox.deposit({ subjectType: 'CARD', subjectId: dedicated.cardId, currency: 'USD', amount: decimal('125.50') });
      assert.equal(amt(credited.available), 125.5);
      const balance = await w.client.funding.balance(w.org.organizationId);
      const usd = balance.cards.find((c) => c.cardId === dedicated.cardId && c.currency === 'USD')!;
      assert.deepEqual([amt(usd.available), amt(usd.pending), amt(usd.total)], [125.5, 0, 125.5]);
      // No receiving account in that currency, a shared card, a frozen cash-in: refused, nothing moves.
      await unchanged(() => w.client.sandbox.deposit({ subjectType: 'CARD', subjectId: usdCompanyCard.cardId, currency: 'USD', amount: decimal('1') }), 'CURRENCY_NOT_ALLOWED');
      const shared = remember(w.partner.partnerId, await issueCard(svc, w));
      await unchanged(() => w.client.sandbox.deposit({ subjectType: 'CARD', subjectId: shared.cardId, currency: 'USD', amount: decimal('1') }), 'CARD_NOT_DEDICATED');
      await unchanged(() => w.client.sandbox.deposit({ subjectType: 'CARD', subjectId: 'cd-unknown', currency: 'USD', amount: decimal('1') }), 'CARD_INVALID');
      await w.client.organizations.updateRestrictions(w.org.organizationId, { addRestrictions: ['CASH_IN_FROZEN'] });
      try {
        const err = await unchanged(() => w.client.sandbox.deposit({ subjectType: 'CARD', subjectId: dedicated.cardId, currency: 'USD', amount: decimal('1') }), 'CAPABILITY_FROZEN');
        assert.equal((err.data as { errorCode: string }).errorCode, 'CASH_IN_FROZEN');
      } finally {
        await w.client.organizations.updateRestrictions(w.org.organizationId, { removeRestrictions: ['CASH_IN_FROZEN'] });
      }
    });
  });

  describe('pool <-> dedicated card transfers (D29)', () => {
    let card: Card;
    before(async () => {
      card = remember(w.partner.partnerId, await issueCard(svc, w, { profile: 'sbx-mc-dedicated' }));
      await w.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: w.org.organizationId, currency: 'USD', amount: decimal('1000.00') });
    });

    const transfer = (overrides: Record<string, unknown> = {}) => w.client.cards.transfer({
      organizationId: w.org.organizationId, cardId: card.cardId, direction: 'POOL_TO_CARD', currency: 'USD', amount: decimal('300.25'),
      externalTranId: ref('tx'), ...overrides,
    } as never);

    it('moves money pool -> card and back as one balanced posting; balances show in fund/v1/balance', async () => {
      const poolBefore = (await w.client.funding.balance(w.org.organizationId)).pools.find((p) => p.currency === 'USD')!;
      const out = await transfer();
      assert.equal(money(out.amount), '300.25');
      assert.equal(amt(out.cardBalance.available), 300.25);
      assert.equal(amt(out.poolBalance.available), amt(poolBefore.available) - 300.25);
      const back = await transfer({ direction: 'CARD_TO_POOL', amount: decimal('0.25') });
      assert.equal(amt(back.cardBalance.available), 300);
      const balance = await w.client.funding.balance(w.org.organizationId);
      const cardUsd = balance.cards.find((c) => c.cardId === card.cardId && c.currency === 'USD')!;
      assert.equal(amt(cardUsd.available), 300);
    });

    it('answers the amount and both balances with the digits fund/v1/balance shows (two decimals, D4)', async () => {
      const out = await transfer({ amount: decimal('1.1') });
      assert.equal(money(out.amount), '1.10');
      const balance = await w.client.funding.balance(w.org.organizationId);
      const pool = balance.pools.find((p) => p.currency === 'USD')!;
      const cardUsd = balance.cards.find((c) => c.cardId === card.cardId && c.currency === 'USD')!;
      const digits = (b: { available: unknown; pending: unknown; total: unknown }) => [money(b.available), money(b.pending), money(b.total)];
      assert.deepEqual(digits(out.poolBalance), digits(pool));
      assert.deepEqual(digits(out.cardBalance), digits(cardUsd));
      for (const text of [...digits(out.poolBalance), ...digits(out.cardBalance)]) assert.match(text, /^-?\d+\.\d{2}$/);
      await transfer({ direction: 'CARD_TO_POOL', amount: decimal('1.10') });
    });

    it('each error changes nothing: EXTERNAL_TRAN_ID_DUPLICATE, INSUFFICIENT_BALANCE, CARD_NOT_DEDICATED, CARD_INVALID, currencies, organization, amount', async () => {
      const externalTranId = ref('tx');
      await transfer({ externalTranId, amount: decimal('1') });
      await unchanged(() => transfer({ externalTranId, amount: decimal('1') }), 'EXTERNAL_TRAN_ID_DUPLICATE');
      await unchanged(() => transfer({ direction: 'CARD_TO_POOL', amount: decimal('100000') }), 'INSUFFICIENT_BALANCE');
      await unchanged(() => transfer({ amount: decimal('99999999') }), 'INSUFFICIENT_BALANCE');
      // D1: data.errorMsg names the short side (the card, or the company's pool), never a ledger account id.
      const fromCard = await transfer({ direction: 'CARD_TO_POOL', amount: decimal('100000') }).catch((e: unknown) => e);
      assert.ok(fromCard instanceof CardServiceError);
      assert.deepEqual(fromCard.data, { errorCode: 'INSUFFICIENT_BALANCE', errorMsg: `card ${card.cardId} USD` });
      const fromPool = await transfer({ amount: decimal('99999999') }).catch((e: unknown) => e);
      assert.ok(fromPool instanceof CardServiceError);
      assert.deepEqual(fromPool.data, { errorCode: 'INSUFFICIENT_BALANCE', errorMsg: `pool ${w.org.organizationId} USD` });
      const shared = remember(w.partner.partnerId, await issueCard(svc, w));
      await unchanged(() => transfer({ cardId: shared.cardId }), 'CARD_NOT_DEDICATED');
      await unchanged(() => transfer({ cardId: 'cd-unknown' }), 'CARD_INVALID');
      const otherCompany = await newCompany(w.client);
      const elsewhere = remember(w.partner.partnerId, await issueCard(svc, { ...w, org: otherCompany, employee: await approvedEmployee(w.client, otherCompany.organizationId) }, { profile: 'sbx-visa-dedicated' }));
      await unchanged(() => transfer({ cardId: elsewhere.cardId }), 'CARD_INVALID');
      await unchanged(() => transfer({ currency: 'EUR' }), 'UNSUPPORTED_CURRENCY');
      await unchanged(() => transfer({ currency: 'usd' }), 'DAPI_PARAM_INVALID', 'currency');
      const usdOnly = await newCompany(w.client, { fundingCurrencies: ['USD'] });
      const usdCard = remember(w.partner.partnerId, await issueCard(svc, { ...w, org: usdOnly, employee: await approvedEmployee(w.client, usdOnly.organizationId) }, { profile: 'sbx-visa-dedicated' }));
      await unchanged(() => transfer({ organizationId: usdOnly.organizationId, cardId: usdCard.cardId, currency: 'HKD' }), 'CURRENCY_NOT_ALLOWED', 'HKD');
      await unchanged(() => transfer({ organizationId: 'org-unknown' }), 'ORGANIZATION_INVALID');
      await unchanged(() => transfer({ amount: decimal('1.001') }), 'DAPI_PARAM_INVALID', 'amount');
      await unchanged(() => transfer({ amount: decimal('-1') }), 'DAPI_PARAM_INVALID', 'amount');
      await unchanged(() => transfer({ direction: 'SIDEWAYS' }), 'DAPI_PARAM_INVALID', 'direction');
    });

    it('cancelling a dedicated card returns its available balance to the pool; the card can no longer receive transfers', async () => {
      const poolBefore = amt((await w.client.funding.balance(w.org.organizationId)).pools.find((p) => p.currency === 'USD')!.available);
      const cardBefore = amt((await w.client.funding.balance(w.org.organizationId)).cards.find((c) => c.cardId === card.cardId && c.currency === 'USD')!.available);
      assert.ok(cardBefore > 0);
      await w.client.cards.cancel(card.cardId);
      const after = await w.client.funding.balance(w.org.organizationId);
      assert.equal(amt(after.cards.find((c) => c.cardId === card.cardId && c.currency === 'USD')!.available), 0);
      assert.equal(amt(after.pools.find((p) => p.currency === 'USD')!.available), poolBefore + cardBefore);
      await unchanged(() => transfer(), 'CARD_INVALID');
      const audit = await admin(svc).audit(w.partner.partnerId);
      assert.equal(audit.ok, true, 'the ledger re-derives every balance');
    });
  });

  describe('card keys (D26): every ciphertext names its key, so keys rotate while old cards stay readable', () => {
    it('a PAN data key rotation keeps old cards readable; re-encryption moves them to the new key with the same data', async () => {
      const old = remember(w.partner.partnerId, await issueCard(svc, w));
      const before = decryptSecureCard(w.partner.secretKey!, await w.client.cards.retrieveSecureCard(old.cardId));
      const keyOf = async (cardId: string) => (await svc.db.query<{ k: string }>('SELECT pan_key_id AS k FROM cards WHERE card_id = $1', [cardId]))[0].k;
      const oldKey = await keyOf(old.cardId);
      const { keyId } = await svc.admin.call<{ keyId: string }>('POST', '/internal/admin/v1/card-keys/rotate', { body: { purpose: 'PAN_DATA' } });
      assert.notEqual(keyId, oldKey);
      const inventory = await svc.admin.call<{ keyId: string; purpose: string; status: string; checkValue: string }[]>('GET', '/internal/admin/v1/card-keys');
      assert.deepEqual(inventory.filter((k) => k.purpose === 'PAN_DATA' && k.status === 'ACTIVE').map((k) => k.keyId), [keyId]);
      assert.ok(inventory.every((k) => !('wrappedKey' in k) && /^[0-9A-F]{6}$/.test(k.checkValue)), 'no key material in the inventory');
      const fresh = remember(w.partner.partnerId, await issueCard(svc, w));
      assert.equal(await keyOf(fresh.cardId), keyId, 'new cards use the new key');
      assert.equal(await keyOf(old.cardId), oldKey);
      const still = decryptSecureCard(w.partner.secretKey!, await w.client.cards.retrieveSecureCard(old.cardId));
      assert.ok(still.pan === before.pan && still.cvv2 === before.cvv2 && still.expireDate === before.expireDate, 'old card readable');
      let remaining = Infinity;
      while (remaining > 0) ({ remaining } = await svc.admin.call<{ remaining: number }>('POST', '/internal/admin/v1/card-keys/reencrypt', { body: { limit: 5 } }));
      assert.equal(await keyOf(old.cardId), keyId, 're-encrypted under the active key');
      const after = decryptSecureCard(w.partner.secretKey!, await w.client.cards.retrieveSecureCard(old.cardId));
      assert.ok(after.pan === before.pan && after.cvv2 === before.cvv2, 'same card data after re-encryption');
    });

    it('a configured CVK (CARD_CVK) is the Visa CVV key of new cards end to end; cards issued before keep their CVV2', async () => {
      const old = remember(w.partner.partnerId, await issueCard(svc, w));
      const oldPlain = await plaintextOf(svc, w.partner.partnerId, old.cardId);
      const { testDatabase } = await import('./helpers/service.ts');
      const second = await startService({
        db: await (await testDatabase()).openAnother(),
        clock: svc.clock,
        // The published demonstration key: test data only.
        env: { CARD_CVK: '0123456789ABCDEFFEDCBA9876543210', CARD_CVK_ID: 'cvk-demo' },
      });
      try {
        const other = { ...w, client: second.clientFor(w.partner) };
        const card = await other.client.cards.apply({
          organizationId: w.org.organizationId, cardApplyRef: ref(), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: w.employee.customerId,
        });
        const { processCardApplications } = await import('../src/domains/cards/testing.ts');
        await processCardApplications(second.ctx);
        const done = await other.client.cards.queryApply(card.cardApplyId);
        assert.equal(done.status, 'SUCCESS');
        remember(w.partner.partnerId, await other.client.cards.query(done.cardId!));
        const plain = decryptSecureCard(w.partner.secretKey!, await other.client.cards.retrieveSecureCard(done.cardId!));
        const { computeCvv2 } = await import('../src/platform/crypto/cvv.ts');
        const yymm = plain.expireDate.slice(3) + plain.expireDate.slice(0, 2);
        assert.equal(plain.cvv2, computeCvv2(Buffer.from('0123456789ABCDEFFEDCBA9876543210', 'hex'), plain.pan, yymm), 'CVV2 = Visa CVV(PAN, YYMM, 000) under the CVK');
        const [{ k }] = await svc.db.query<{ k: string }>('SELECT cvk_key_id AS k FROM cards WHERE card_id = $1', [done.cardId]);
        assert.equal(k, 'cvk-demo');
        assert.deepEqual(await plaintextOf(svc, w.partner.partnerId, old.cardId), oldPlain, 'the earlier card keeps its CVK and CVV2');
      } finally {
        await second.close();
        svc.logs.push(...second.logs); // the final scan covers the second instance too
      }
    });
  });

  it('D26: after all of the above, no plaintext PAN or CVV2 in any database column or log line', async () => {
    const secrets = [];
    for (const c of issued) {
      const plain = await plaintextOf(svc, c.partnerId, c.cardId);
      secrets.push({ pan: plain.pan, cvv2: plain.cvv2, encrypted: c.encrypted });
    }
    assert.ok(secrets.length >= 15);
    const scanned = await assertNoCardDataLeak(svc, secrets);
    assert.ok(scanned.logLines > 50, 'the logs of this run were scanned');
  });
});
