import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { fundedCard, purchase, type SpendWorld } from './helpers/authorization.ts';
import { consoleLogin, createOperatorViaApi, type ConsoleSession } from './helpers/console.ts';
import { decimal } from '../sdk/index.ts';
import { creditUser, newUserId } from './helpers/managed.ts';

/** Issue 29: the console's pages through the real server (HTTP, no browser): paging, masking, search. */
let svc: TestService;
let world: SpendWorld;
let session: ConsoleSession;
const transIds: string[] = [];

before(async () => {
  svc = await startService();
  world = await fundedCard(svc, { funds: '100.00' });
  for (let i = 0; i < 23; i++) {
    svc.clock.advance(1000);
    transIds.push((await world.client.sandbox.authorize(purchase(world.card.cardId, '1.00'))).transId);
  }
  const op = await createOperatorViaApi(svc, 'pat.pages', 'viewer');
  session = await consoleLogin(svc, 'pat.pages', op.credentials.password, op.credentials.totpSecret);
});
after(async () => {
  await svc.close();
  await closeTestDatabase();
});

const get = async (path: string) => {
  const res = await fetch(svc.baseUrl + path, { headers: { cookie: session.cookie } });
  assert.equal(res.status, 200, path);
  return res.text();
};
const shown = (html: string) => transIds.filter((id) => html.includes(`/console/transactions/${id}"`));

describe('console pages (issue 29)', () => {
  it("a card's transactions page newest first by keyset: 20, then the rest, each once", async () => {
    const first = await get(`/console/cards/${world.card.cardId}`);
    assert.deepEqual(shown(first).sort(), transIds.slice(3).sort());
    const positions = transIds.slice(3).map((id) => first.indexOf(`/console/transactions/${id}"`));
    assert.ok(positions.every((p, i) => i === 0 || p < positions[i - 1]), 'newest first');
    const next = /href="(\/console\/cards\/[^"?]+\?before=[^"]+)" rel="next"/.exec(first)?.[1];
    assert.ok(next, 'a next page link');
    const second = await get(next!.replace(/&amp;/g, '&'));
    assert.deepEqual(shown(second).sort(), transIds.slice(0, 3).sort());
    assert.doesNotMatch(second, /rel="next"/);
  });

  it('shows the card number masked only, and finds the card by its last four and a transaction by its id', async () => {
    const [{ pan }] = await svc.db.query<{ pan: string }>('SELECT pan_first6 || pan_last4 AS pan FROM cards WHERE card_id = $1', [world.card.cardId]);
    const page = await get(`/console/cards/${world.card.cardId}`);
    assert.ok(page.includes(`•••• •••• •••• ${world.card.panLast4}`));
    assert.ok(!page.includes(pan), 'no first six beside the last four');
    assert.ok((await get(`/console?q=${world.card.panLast4}`)).includes(`/console/cards/${world.card.cardId}"`));
    assert.ok((await get(`/console?q=${transIds[5]}`)).includes(`/console/transactions/${transIds[5]}"`));
    const timeline = await get(`/console/transactions/${transIds[5]}`);
    assert.match(timeline, /CARD_TRANSACTION/);
  });

  it("shows a subject's restrictions with source and remark; the risk change that set them is in the audit trail", async () => {
    const res = await fetch(`${svc.baseUrl}/internal/admin/v1/restrictions`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subjectType: 'CUSTOMER', subjectId: world.employee.customerId, addRestrictions: ['CARD_FROZEN'], source: 'RISK', remark: 'chargeback review' }),
    });
    assert.equal(((await res.json()) as { code: string }).code, 'SYS_SUCCESS');
    const page = await get(`/console/restrictions?subjectType=CUSTOMER&subjectId=${world.employee.customerId}`);
    assert.match(page, /<td>CARD_FROZEN<\/td><td>RISK<\/td><td>chargeback review<\/td>/);
    const audit = await get(`/console/audit?target=${world.employee.customerId}`);
    assert.match(audit, /POST \/internal\/admin\/v1\/restrictions/);
    assert.match(audit, /chargeback review/);
  });

  it('finds a managed user of any partner by the partner\'s user id', async () => {
    const user = newUserId();
    await creditUser(world.client, user, 'USDT', '5');
    const page = await get(`/console?q=${user}`);
    assert.match(page, /Managed users/);
    assert.ok(page.includes(`/console/partners/${world.partner.partnerId}"`));
  });

  it("a transaction's page shows each posting it made with its entries (account, debit or credit, amount, asset) and the partner decision", async () => {
    const transId = transIds[7];
    await world.client.sandbox.clear({ transId, amount: decimal('1.00') });
    const page = await get(`/console/transactions/${transId}`);
    const postings = [...page.matchAll(/<caption>Posting (lp[^:]*): ([A-Z_]+)/g)].map((m) => m[2]);
    assert.deepEqual(postings, ['AUTHORIZATION', 'CLEARING'], 'the hold and the clearing');
    const entries = [...page.matchAll(/<tr><td>([^<]+)<\/td><td>([^<]*(?:<a [^>]+>[^<]+<\/a>)?)<\/td><td>(AVAILABLE|PENDING)<\/td><td>(Debit|Credit)<\/td><td>([0-9.]+)<\/td><td>(USD)<\/td><\/tr>/g)]
      .map((m) => `${m[3]} ${m[4]} ${Number(m[5]).toFixed(2)} ${m[6]}`);
    assert.deepEqual(entries, ['AVAILABLE Debit 1.00 USD', 'PENDING Credit 1.00 USD', 'PENDING Debit 1.00 USD', 'AVAILABLE Credit 1.00 USD']);
    assert.match(page, /ORGANIZATION_POOL/);
    assert.match(page, /CLEARING /);
    assert.match(page, /<h2>Partner decision<\/h2>\s*<p>Not forwarded to the partner for a decision.<\/p>/);
  });

  it('the ledger page shows the statement as a table: date, type, signed amount, balance after, reference', async () => {
    const page = await get(`/console/ledger?organizationId=${world.org.organizationId}`);
    assert.match(page, /<th scope="col">Date<\/th><th scope="col">Type<\/th><th scope="col">Amount<\/th>/);
    assert.match(page, /<td>AUTHORIZATION<\/td><td>0(\.0+)?<\/td><td>USD<\/td><td>[0-9.]+<\/td><td>100(\.0+)?<\/td><td>tx[^<]+ \(Authorization hold\)<\/td>/,
      'a hold moves available to pending: the balance stays');
    assert.match(page, /<td>CLEARING<\/td><td>-1(\.0+)?<\/td><td>USD<\/td>/, 'money out with a minus');
    assert.doesNotMatch(page, /statementId|\{"/, 'no raw JSON');
    const next = /href="([^"]+older=[0-9]+\.st[0-9]+)" rel="next"/.exec(page)?.[1];
    assert.ok(next, 'more lines than one page');
    const older = await get(next!.replace(/&amp;/g, '&'));
    assert.match(older, /<td>DEPOSIT<\/td><td>\+100(\.0+)?<\/td><td>USD<\/td>/, 'money in with a plus');
    // Keyset pages: every line once, none skipped (the first page's 20 and the rest).
    const lineIds = (html: string) => [...html.matchAll(/<tr><td>(20[0-9T:.Z-]+)<\/td><td>([A-Z_]+)<\/td><td>([^<]+)<\/td><td>USD<\/td><td>([^<]+)<\/td>/g)].map((m) => m.slice(1).join(' '));
    const all = [...lineIds(page), ...lineIds(older)];
    const [{ n }] = await svc.db.query<{ n: string }>(
      `SELECT ((SELECT count(DISTINCT e.posting_id) FROM ledger_entries e JOIN ledger_accounts a ON a.account_id = e.account_id
                 WHERE a.owner_type = 'ORGANIZATION_POOL' AND a.owner_id = $1 AND a.currency = 'USD')
             -- Issue 34: a hold is a line of its own, recorded on its authorization (no posting).
             + (SELECT count(*) FROM card_transactions t JOIN ledger_accounts a ON a.account_id = t.funds_account_id
                 WHERE a.owner_type = 'ORGANIZATION_POOL' AND a.owner_id = $1 AND a.currency = 'USD' AND t.hold_seq IS NOT NULL))::text AS n`,
      [world.org.organizationId]);
    assert.equal(all.length, Number(n));
    assert.equal(new Set(all).size, all.length, 'no line twice');
    assert.doesNotMatch(older, /rel="next"/);
  });

  it("a partner's page shows webhook health from its newest events' delivery attempts", async () => {
    const page = await get(`/console/partners/${world.partner.partnerId}`);
    assert.match(page, /Attempts for the newest [0-9]+ events<\/dt><dd>[0-9]+ delivered, [0-9]+ failed<\/dd>/);
    assert.match(page, /Last delivered<\/dt>/);
  });

  it('the ledger page shows the job backlogs and the network keys', async () => {
    const page = await get('/console/ledger');
    assert.match(page, /Webhook deliveries pending<\/dt><dd>[1-9][0-9]*<\/dd>/, 'the CARD_TRANSACTION events wait for delivery');
    assert.match(page, /Card applications in progress<\/dt><dd>0<\/dd>/);
    assert.match(page, /Network keys/);
    // The last recorded audit is shown; running one from the page records a clean result.
    await get('/console/ledger?audit=1');
    assert.match(await get('/console/ledger'), /Last result<\/dt><dd>Clean<\/dd>/);
  });
});
