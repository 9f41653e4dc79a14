import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/errors.ts';
import { OPERATOR_ROLES } from '../../platform/caller.ts';
import { blockCard, cardApplicationBacklog, cardLookup, cardView, dedicatedCards, findCardById, findCardsByLast4, unblockCard } from '../cards/index.ts';
import { queryQuota } from '../velocity/index.ts';
import { fundBalance, statement } from '../funding/index.ts';
import { cardTransactionsPage, findTransactionRefs, holdExpiryBacklog, networkKeys, queryTransaction, transactionTimelineRefs, type TransactionView } from '../authorization/index.ts';
import { partnersByIds, partnerView, webhookSecretStatus } from '../partners/index.ts';
import { deliveryBacklog, eventDetail, listEvents, resendEvent, webhookHealth } from '../events/index.ts';
import { decideKyc, findCustomerAnyPartner, pendingKycReviews } from '../customers/index.ts';
import { findOrganizationById, restrictionDetails, type SubjectType } from '../organizations/index.ts';
import { auditLedger, lastLedgerAudit, postingsWithEntries } from '../ledger/index.ts';
import { findManagedUsers } from '../managed-balance/index.ts';
import { createOperator, listAudit, listOperators, updateOperator } from '../operators/index.ts';
import { ActionForm, Facts, html, link, maskedPan, page, Pager, show, Table } from './views.ts';
import { ConsoleRefusal, done, form, need, noticeOf, withoutCsrf, type ConsoleDeps } from './plugin.ts';

const PAGE_SIZE = 20;
const ID = /^[A-Za-z0-9_-]{1,64}$/;

function pageNo(value: string | undefined): number {
  const n = Number(value ?? '1');
  return Number.isInteger(n) && n >= 1 && n <= 10_000 ? n : 1;
}

function notFound(what: string): never {
  throw new ConsoleRefusal(`${what} not found.`, 404);
}

function checkId(value: string, what: string): string {
  if (!ID.test(value)) notFound(what);
  return value;
}

/** The console's pages: reads for every role, changes behind the role their action needs. */
export function consolePages(app: FastifyInstance, deps: ConsoleDeps): void {
  const { gate } = deps;
  const now = () => new Date(deps.clock.now());
  const render = (req: FastifyRequest, reply: FastifyReply, title: string, body: unknown, error: string | null = null) => {
    reply.type('text/html; charset=utf-8');
    const c = req.console!;
    return page({ title, caller: c.caller, csrf: c.csrf, notice: noticeOf(req), error }, body as never);
  };
  /**
   * Runs a console change and its audit entry in one transaction (the admin API's path, gate.recorded);
   * a failure is rolled back, recorded as FAILED, and a business refusal shown on the page.
   */
  const change = async <T>(req: FastifyRequest, action: string, target: string, summary: Record<string, unknown>, fn: () => Promise<T>): Promise<T> => {
    try {
      return await gate.recorded(req, req.console!.caller, action, target, summary, fn);
    } catch (err) {
      if (err instanceof ApiError) throw new ConsoleRefusal(err.message, 409);
      throw err;
    }
  };

  // ---- search -----------------------------------------------------------------------------------
  app.get('/', async (req, reply) => {
    const q = String((req.query as { q?: string }).q ?? '').trim().slice(0, 64);
    const results: unknown[] = [];
    if (q) {
      if (/^[0-9]{4}$/.test(q)) {
        const cards = await findCardsByLast4(deps.db, q);
        results.push(h2Table('Cards ending in ' + q, ['Card', 'Number', 'Status', 'Cardholder', 'Partner'], cards.map((c) => [
          link(`/console/cards/${c.cardId}`, c.cardId), maskedPan(c.panLast4), c.status, show(c.cardholderName), link(`/console/partners/${c.partnerId}`, c.partnerId),
        ])));
      } else if (ID.test(q)) {
        const [card, refs, partners, customer, organization, users] = await Promise.all([
          findCardById(deps.db, q), findTransactionRefs(deps.db, q), partnersByIds(deps.db, [q]), findCustomerAnyPartner(deps.db, q), findOrganizationById(deps.db, q),
          findManagedUsers(deps.db, q),
        ]);
        if (users.length) {
          results.push(h2Table('Managed users', ['User', 'External user id', 'Partner', 'Created'], users.map((u) => [u.userId, u.externalUserId,
            link(`/console/partners/${u.partnerId}`, u.partnerId), u.createdAt.toISOString()])));
        }
        if (card) results.push(h2Table('Card', ['Card', 'Number', 'Status'], [[link(`/console/cards/${card.cardId}`, card.cardId), maskedPan(card.panLast4), card.status]]));
        if (refs.length) results.push(h2Table('Transactions', ['Transaction', 'Card'], refs.map((r) => [link(`/console/transactions/${r.transId}`, r.transId), link(`/console/cards/${r.cardId}`, r.cardId)])));
        for (const p of partners) results.push(h2Table('Partner', ['Partner', 'Name', 'Status'], [[link(`/console/partners/${p.partnerId}`, p.partnerId), p.name, p.status]]));
        if (customer) {
          results.push(h2Table('Employee', ['Employee', 'Name', 'KYC', 'Lifecycle', 'Partner'], [[customer.customerId, `${customer.firstName} ${customer.lastName}`,
            customer.kycStatus, customer.lifecycle, link(`/console/partners/${customer.partnerId}`, customer.partnerId)]]));
        }
        if (organization) {
          results.push(h2Table('Organization', ['Organization', 'Name', 'Partner'], [[link(`/console/ledger?organizationId=${organization.organizationId}`, organization.organizationId),
            show((organization as { name?: string }).name),
            link(`/console/partners/${organization.partnerId}`, organization.partnerId)]]));
        }
      }
      if (results.length === 0) results.push(html`<p role="status">Nothing matches “${q}”.</p>`);
    }
    return render(req, reply, 'Search', html`
      <form method="get" action="/console" role="search" class="stack">
        <label for="q">Card id or last four digits, transaction id or network transaction id, partner, organization, employee or managed user id</label>
        <input id="q" name="q" value=${q} autofocus />
        <button type="submit">Search</button>
      </form>
      ${results}`);
  });

  // ---- a card -----------------------------------------------------------------------------------
  app.get('/cards/:cardId', async (req, reply) => {
    const card = await findCardById(deps.db, checkId((req.params as { cardId: string }).cardId, 'Card')) ?? notFound('Card');
    const before = String((req.query as { before?: string }).before ?? '');
    const v = cardView(card);
    const [transactions, events, quota] = await Promise.all([
      cardTransactionsPage(deps.db, card.cardId, ID.test(before) ? before : null, PAGE_SIZE)
        .then(async ({ refs, more }) => ({ more, views: await Promise.all(refs.map((r) => queryTransaction(deps, r.partnerId, r.transId))) })),
      listEvents(deps, card.partnerId, { businessId: card.cardId, page: 1, pageSize: 10 }),
      queryQuota({ ...deps, cards: cardLookup }, card.partnerId, { organizationId: card.organizationId, subjectType: 'CARD', subjectId: card.cardId })
        .catch((err: unknown) => (err instanceof ApiError ? { error: err.message } : Promise.reject(err))),
    ]);
    const csrf = req.console!.csrf;
    const base = `/console/cards/${card.cardId}`;
    return render(req, reply, `Card ${maskedPan(card.panLast4)}`, html`
      ${Facts({ label: 'Card', facts: [['Card id', v.cardId], ['Number', maskedPan(v.panLast4)], ['Status', v.status], ['Partner', link(`/console/partners/${card.partnerId}`, card.partnerId)],
        ['Profile', v.cardProfileId], ['Network', v.cardNetwork], ['Form', v.cardForm], ['Currency', v.currency], ['Balance mode', v.balanceMode],
        ['Holder', show(v.cardholderName)], ['Subject', `${v.subjectType} ${v.subjectId}`], ['Organization', v.organizationId], ['Created', v.createTime]] })}
      <div>
        ${card.status === 'ACTIVE' ? ActionForm({ action: `${base}/block`, csrf, label: 'Block card', danger: true }) : null}
        ${card.status === 'BLOCKED' ? ActionForm({ action: `${base}/unblock`, csrf, label: 'Unblock card' }) : null}
      </div>
      <h2>Rules and usage</h2>
      ${Table({ caption: `Spend rules and current usage per period (as of ${show((quota as { asOfTime?: string }).asOfTime)})`, head: ['Item', 'Value'],
        rows: Object.entries(quota).filter(([k]) => !['subjectType', 'subjectId', 'asOfTime'].includes(k)).map(([k, v]) => [k, show(v)]), empty: 'No rule applies.' })}
      <h2>Transactions</h2>
      ${Table({ caption: 'Transactions, newest first', head: ['Transaction', 'Time', 'Type', 'Amount', 'Merchant', 'Status', 'Decline reason', 'Partner decision'],
        rows: transactions.views.map((t) => txRow(t)), empty: 'No transactions.' })}
      ${Pager({ label: 'Transaction pages', prev: before ? base : null, prevText: 'Newest transactions',
        next: transactions.more ? `${base}?before=${transactions.views.at(-1)!.transId}` : null })}
      <h2>Events</h2>
      ${eventTable(events.result, card.partnerId, csrf)}`);
  });

  for (const [verb, fn, notice] of [['block', blockCard, 'blocked'], ['unblock', unblockCard, 'unblocked']] as const) {
    app.post(`/cards/:cardId/${verb}`, async (req, reply) => {
      const cardId = checkId((req.params as { cardId: string }).cardId, 'Card');
      await need(gate, req, 'support', `card.${verb}`, cardId);
      const card = await findCardById(deps.db, cardId) ?? notFound('Card');
      await change(req, `card.${verb}`, cardId, { from: card.status }, () => fn(deps, card.partnerId, cardId));
      return done(reply, `/console/cards/${cardId}`, notice);
    });
  }

  // ---- a transaction's timeline --------------------------------------------------------------------
  app.get('/transactions/:transId', async (req, reply) => {
    const transId = checkId((req.params as { transId: string }).transId, 'Transaction');
    const refs = await transactionTimelineRefs(deps.db, transId);
    if (refs.length === 0) notFound('Transaction');
    const views = (await Promise.all(refs.map((r) => queryTransaction(deps, r.partnerId, r.transId)))).sort((a, b) => String(a.createTime).localeCompare(String(b.createTime)));
    const partnerId = refs[0].partnerId;
    // CARD_TRANSACTION events are the card's (businessId = cardId): those of this timeline's window
    // whose payload names one of its messages.
    const members = new Set(views.map((t) => t.transId));
    const times = views.flatMap((t) => [String(t.createTime), String(t.modifyTime)]).sort();
    const cardEvents = await listEvents(deps, partnerId, {
      businessId: refs[0].cardId, eventType: 'CARD_TRANSACTION', startTime: times[0], endTime: new Date(Date.parse(times.at(-1)!) + 1000).toISOString(),
      page: 1, pageSize: 100,
    });
    const mine = cardEvents.result.filter((e) => members.has(String((e.data as { transId?: unknown } | null)?.transId)));
    const details = await Promise.all(mine.slice(0, 20).map((e) => eventDetail(deps, partnerId, e.eventId)));
    const decision = views.find((t) => t.partnerDecision)?.partnerDecision ?? null;
    const postings = await postingsWithEntries(deps.db, partnerId, { postingIds: refs.flatMap((r) => (r.postingId ? [r.postingId] : [])), references: [...members] });
    const messageOf = new Map(refs.flatMap((r) => (r.postingId ? [[r.postingId, r.transId] as const] : [])));
    return render(req, reply, `Transaction ${transId}`, html`
      ${Facts({ label: 'Transaction', facts: [['Card', link(`/console/cards/${refs[0].cardId}`, refs[0].cardId)], ['Partner', link(`/console/partners/${partnerId}`, partnerId)]] })}
      <h2>Timeline</h2>
      ${Table({ caption: 'Messages, oldest first', head: ['Transaction', 'Time', 'Type', 'Amount', 'Merchant', 'Status', 'Decline reason', 'Partner decision'],
        rows: views.map((t) => txRow(t)) })}
      <h2>Partner decision</h2>
      ${decision ? Facts({ label: 'Partner decision', facts: [['Outcome', decision.outcome], ['Latency', `${decision.latencyMs} ms`],
        ['Stand-in', decision.standInReason ? `yes: ${decision.standInReason}` : 'no'], ['Partner decline reason', show(decision.partnerDeclineReason)],
        ['HTTP status', show(decision.httpStatus)]] }) : html`<p>Not forwarded to the partner for a decision.</p>`}
      <h2>Ledger postings</h2>
      ${postings.length === 0 ? html`<p>No ledger posting.</p>` : postings.map((p) => Table({
        caption: `Posting ${p.postingId}: ${p.kind}${p.forced ? ' (forced)' : ''}, ${p.createdAt.toISOString()}, for ${messageOf.get(p.postingId) ?? p.reference ?? '—'}`,
        head: ['Account', 'Owner', 'Bucket', 'Debit or credit', 'Amount', 'Asset'],
        rows: p.entries.map((e) => [e.accountId, e.ownerType === 'CARD' ? html`CARD ${link(`/console/cards/${e.ownerId}`, e.ownerId)}` : `${e.ownerType} ${e.ownerId}`,
          e.bucket, e.side === 'DEBIT' ? 'Debit' : 'Credit', e.amount, e.currency]) }))}
      <h2>Webhooks</h2>
      ${Table({ caption: 'Events and their delivery attempts', head: ['Event', 'Type', 'Status', 'Attempts'], rows: details.map((e) => [e.eventId, e.eventType, e.status,
        e.attemptLog.map((a) => `#${a.attemptNo} ${show(a.outcome)} ${show(a.httpStatus)} ${show(a.latencyMs)} ms`).join('; ') || '—']), empty: 'No events.' })}`);
  });

  // ---- a partner ------------------------------------------------------------------------------------
  app.get('/partners/:partnerId', async (req, reply) => {
    const partnerId = checkId((req.params as { partnerId: string }).partnerId, 'Partner');
    const [p] = await partnersByIds(deps.db, [partnerId]);
    if (!p) notFound('Partner');
    const v = partnerView(p);
    const n = pageNo((req.query as { page?: string }).page);
    const [events, failed, pending, webhookSecret, health] = await Promise.all([
      listEvents(deps, partnerId, { page: n, pageSize: PAGE_SIZE }),
      listEvents(deps, partnerId, { status: 'FAILED', page: 1, pageSize: 1 }),
      listEvents(deps, partnerId, { status: 'PENDING', page: 1, pageSize: 1 }),
      webhookSecretStatus(deps, partnerId),
      webhookHealth(deps.db, partnerId),
    ]);
    const base = `/console/partners/${partnerId}`;
    return render(req, reply, `Partner ${v.name}`, html`
      ${Facts({ label: 'Settings', facts: [['Partner id', v.partnerId], ['Status', v.status], ['API key (not a secret)', v.apiKey], ['PCI allowlist', String(v.pciCertified)],
        ['Webhook URL', show(v.webhookUrl)], ['Authorization URL', show(v.authUrl)], ['Secure card IVs', v.secureCardIvMode], ['Created', v.createTime],
        ['Webhook signing secret', webhookSecret.configured ? `configured (${webhookSecret.secrets.length} valid; never shown)` : 'none: webhooks signed with the API secret']] })}
      <h2>Whitelists</h2>
      ${Table({ caption: 'Allowed addresses by purpose', head: ['Purpose', 'Addresses'], rows: Object.entries(v.ipWhitelist).map(([k, list]) => [k, (list as string[]).join(', ') || 'any']) })}
      <h2>Webhook health</h2>
      ${Facts({ label: 'Webhook health', facts: [['Events pending delivery', String(pending.total)], ['Events given up', String(failed.total)], ['Events in all', String(events.total)],
        [`Attempts for the newest ${health.events} events`, `${health.succeeded} delivered, ${health.failed} failed`],
        ['Median latency', health.medianLatencyMs === null ? '—' : `${health.medianLatencyMs} ms`],
        ['Last delivered', show(health.lastSuccessAt?.toISOString())],
        ['Last failed attempt', health.lastFailureAt ? `${health.lastFailureAt.toISOString()} (${health.lastFailure})` : '—']] })}
      <h2>Events</h2>
      ${eventTable(events.result, partnerId, req.console!.csrf)}
      ${Pager({ label: 'Event pages', prev: n > 1 ? `${base}?page=${n - 1}` : null, next: n * PAGE_SIZE < events.total ? `${base}?page=${n + 1}` : null })}`);
  });

  app.post('/partners/:partnerId/events/:eventId/resend', async (req, reply) => {
    const { partnerId, eventId } = req.params as { partnerId: string; eventId: string };
    checkId(partnerId, 'Partner');
    checkId(eventId, 'Event');
    await need(gate, req, 'support', 'event.resend', eventId);
    await change(req, 'event.resend', eventId, { partnerId }, () => resendEvent(deps, partnerId, eventId));
    return done(reply, `/console/partners/${partnerId}`, 'resent');
  });

  // ---- KYC queue --------------------------------------------------------------------------------------
  app.get('/kyc', async (req, reply) => {
    const after = String((req.query as { after?: string }).after ?? '');
    const m = /^([0-9]{13})\.([A-Za-z0-9_-]{1,64})$/.exec(after);
    const rows = await pendingKycReviews(deps.db, PAGE_SIZE + 1, m ? { openedAt: new Date(Number(m[1])), reviewId: m[2] } : null);
    const shown = rows.slice(0, PAGE_SIZE);
    const last = shown.at(-1);
    const csrf = req.console!.csrf;
    return render(req, reply, 'KYC review queue', html`
      ${Table({ caption: 'Pending reviews, oldest first', head: ['Employee', 'Name', 'Partner', 'Opened', 'Reason', 'Decision'], empty: 'No review is pending.',
        rows: shown.map((r) => [r.customerId, `${r.firstName} ${r.lastName}`, link(`/console/partners/${r.partnerId}`, r.partnerId), r.openedAt.toISOString(), r.openedBy,
          html`<form method="post" action=${`/console/kyc/${r.customerId}`} class="action">
            <input type="hidden" name="_csrf" value=${csrf} />
            <label for=${`reason-${r.customerId}`}>Reason</label>
            <input id=${`reason-${r.customerId}`} name="reason" maxlength="256" />
            <button type="submit" name="decision" value="APPROVED">Approve</button>
            <button type="submit" name="decision" value="REJECTED" class="danger">Reject</button>
          </form>`]) })}
      ${Pager({ label: 'Queue pages', prev: null, next: rows.length > PAGE_SIZE && last ? `/console/kyc?after=${last.openedAt.getTime()}.${last.reviewId}` : null })}`);
  });

  app.post('/kyc/:customerId', async (req, reply) => {
    const customerId = checkId((req.params as { customerId: string }).customerId, 'Employee');
    await need(gate, req, 'support', 'kyc.decide', customerId);
    const f = form(req);
    const decision = f.decision === 'APPROVED' || f.decision === 'REJECTED' ? f.decision : null;
    if (!decision) throw new ConsoleRefusal('Choose Approve or Reject.', 400);
    const reason = (f.reason ?? '').trim().slice(0, 256) || null;
    await change(req, 'kyc.decide', customerId, { decision, reason }, () => deps.db.tx((q) => decideKyc(q, {
      customerId, partnerId: null, decision, reason, decidedBy: 'OPERATOR', at: now(),
    })));
    return done(reply, '/console/kyc', decision === 'APPROVED' ? 'approved' : 'rejected');
  });

  // ---- restrictions ---------------------------------------------------------------------------------
  app.get('/restrictions', async (req, reply) => {
    const query = req.query as { subjectType?: string; subjectId?: string };
    const subjectType = query.subjectType === 'ORGANIZATION' || query.subjectType === 'CUSTOMER' ? query.subjectType as SubjectType : null;
    const subjectId = query.subjectId && ID.test(query.subjectId) ? query.subjectId : null;
    const list = subjectType && subjectId ? await restrictionDetails(deps.db, { subjectType, subjectId }) : null;
    return render(req, reply, 'Restrictions', html`
      <form method="get" action="/console/restrictions" class="stack">
        <label for="subjectType">Subject type</label>
        <select id="subjectType" name="subjectType">
          <option value="CUSTOMER" selected=${subjectType === 'CUSTOMER'}>Employee</option>
          <option value="ORGANIZATION" selected=${subjectType === 'ORGANIZATION'}>Organization</option>
        </select>
        <label for="subjectId">Subject id</label>
        <input id="subjectId" name="subjectId" value=${subjectId ?? ''} />
        <button type="submit">Show restrictions</button>
      </form>
      ${list ? Table({ caption: `Restrictions of ${subjectId}`, head: ['Code', 'Source', 'Remark', 'Since'], empty: 'No restriction.',
        rows: list.map((r) => [r.code, r.source, show(r.remark), r.createdAt.toISOString()]) }) : null}
      <p>Restrictions are changed by the risk role through the admin API (<code>POST /internal/admin/v1/restrictions</code>).</p>`);
  });

  // ---- ledger -------------------------------------------------------------------------------------------
  app.get('/ledger', async (req, reply) => {
    const query = req.query as { audit?: string; organizationId?: string; older?: string };
    // Keyset paging of the statement (an offset over 100,000 lines takes over a second): the lines
    // up to the last one shown (its time and id), newest first.
    const older = /^([0-9]{13})\.(st[0-9]{1,19})$/.exec(query.older ?? '');
    const run = query.audit === '1';
    const report = run ? await auditLedger(deps.db) : null;
    const organizationId = query.organizationId && ID.test(query.organizationId) ? query.organizationId : null;
    const organization = organizationId ? await findOrganizationById(deps.db, organizationId) : null;
    const [balances, lines] = organization ? await Promise.all([
      fundBalance({ ...deps, cards: dedicatedCards }, organization.partnerId, organization.organizationId),
      statementLines(organization.partnerId, organization.organizationId, older ? { time: Number(older[1]), statementId: older[2] } : null),
    ]) : [null, null];
    return render(req, reply, 'Ledger', html`
      <form method="get" action="/console/ledger" class="action">
        <label for="organizationId">Organization id</label>
        <input id="organizationId" name="organizationId" value=${organizationId ?? ''} />
        <button type="submit">Show pools and statement</button>
      </form>
      ${organizationId && !organization ? html`<p role="status">No organization ${organizationId}.</p>` : null}
      ${balances ? html`<h2>Pools and balances</h2>
        ${Table({ caption: `Pools of ${organizationId}`, head: ['Currency', 'Available', 'Pending', 'Total'],
          rows: balances.pools.map((p) => [p.currency, show(p.available), show(p.pending), show(p.total)]) })}
        ${Table({ caption: 'Dedicated card balances', head: ['Card', 'Currency', 'Available', 'Pending', 'Total'], empty: 'No dedicated card.',
          rows: balances.cards.map((c) => [link(`/console/cards/${c.cardId}`, c.cardId), c.currency, show(c.available), show(c.pending), show(c.total)]) })}` : null}
      ${lines ? html`<h2>Statement</h2>
        ${Table({ caption: older ? `Older pool movements, newest first` : `Pool movements, newest first (${lines.total} in all)`,
          head: ['Date', 'Type', 'Amount', 'Asset', 'Available after', 'Balance after', 'Reference'],
          rows: lines.result.map((l) => [l.createTime, l.type, signed(show(l.amount)), l.currency, show(l.availableAfter), show(l.totalAfter),
            l.description ? `${show(l.reference)} (${l.description})` : show(l.reference)]), empty: 'No movement.' })}
        ${Pager({ label: 'Statement pages', prev: older ? `/console/ledger?organizationId=${organizationId}` : null, prevText: 'Newest movements',
          next: lines.more && lines.result.length ? `/console/ledger?organizationId=${organizationId}&older=${Date.parse(lines.result.at(-1)!.createTime)}.${lines.result.at(-1)!.statementId}` : null })}` : null}
      <h2>Job backlogs</h2>
      ${await backlogs()}
      <h2>Network keys</h2>
      ${Table({ caption: 'Card network ingress keys (never a secret)', head: ['Key', 'Name', 'Status', 'Allowed addresses', 'Created'], empty: 'No network key.',
        rows: (await networkKeys(deps)).map((k) => [k.networkKeyId, k.name, k.status, (k.ipAllowlist as string[]).join(', ') || 'any', show(k.createTime)]) })}
      <h2>Ledger audit</h2>
      <p>The ledger audit re-derives every balance from its postings. Worker instances run it every few hours.</p>
      ${await lastAudit()}
      <form method="get" action="/console/ledger">
        <input type="hidden" name="audit" value="1" />
        ${organizationId ? html`<input type="hidden" name="organizationId" value=${organizationId} />` : null}
        <button type="submit">Run the ledger audit</button>
      </form>
      ${report ? html`<h2>Audit result</h2>
        ${Facts({ label: 'Ledger audit', facts: [['Result', report.ok ? 'Clean' : 'Findings'], ['Accounts', String(report.accounts)], ['Postings', String(report.postings)],
          ['Entries', String(report.entries)]] })}
        ${Table({ caption: 'Findings', head: ['Finding'], rows: report.findings.slice(0, 50).map((f) => [show(f)]), empty: 'No findings.' })}` : null}`);
  });

  /**
   * A page of a pool's statement, newest first: the first page, or the lines after `after` (the last
   * line shown). The statement is asked for lines before the next millisecond, so lines of the same
   * millisecond as `after` come first and those already shown are dropped.
   */
  const statementLines = async (partnerId: string, organizationId: string, after: { time: number; statementId: string } | null) => {
    const page = await statement(deps, partnerId, { organizationId, ...(after ? { endTime: new Date(after.time + 1).toISOString() } : {}) },
      { page: 1, pageSize: PAGE_SIZE * 2 });
    const shownUpTo = after ? page.result.findIndex((l) => l.statementId === after.statementId) : -1;
    const rest = page.result.slice(shownUpTo + 1);
    return { total: page.total, result: rest.slice(0, PAGE_SIZE), more: rest.length > PAGE_SIZE || page.total > page.result.length };
  };

  // Issue 29: the last recorded audit (kept by the ledger for every instance), before any run from here.
  const lastAudit = async () => {
    const last = await lastLedgerAudit(deps.db);
    return Facts({ label: 'Last ledger audit', facts: last
      ? [['Last audit', last.finishedAt.toISOString()], ['Last result', last.ok ? 'Clean' : `${last.findings} findings`]]
      : [['Last audit', 'Never run']] });
  };

  const backlogs = async () => {
    const [deliveries, applications, holds] = await Promise.all([deliveryBacklog(deps.db, now()), cardApplicationBacklog(deps.db), holdExpiryBacklog(deps.db, now())]);
    return Facts({ label: 'Job backlogs', facts: [['Webhook deliveries pending', deliveries.pending], ['… of which due now', deliveries.due],
      ['Card applications in progress', applications], ['Authorization holds past expiry', holds]] });
  };

  // ---- audit trail ------------------------------------------------------------------------------------
  app.get('/audit', async (req, reply) => {
    const query = req.query as Record<string, string | undefined>;
    const clean = (v: string | undefined, max: number) => (v && v.length <= max ? v : undefined);
    const filter = { actor: clean(query.actor, 64), action: clean(query.action, 200), target: clean(query.target, 64),
      beforeSeq: query.before && /^[1-9][0-9]{0,17}$/.test(query.before) ? query.before : undefined };
    const { entries, next } = await listAudit(deps.db, filter, 50);
    const keep = new URLSearchParams(Object.entries({ actor: filter.actor, action: filter.action, target: filter.target }).filter(([, v]) => v) as [string, string][]);
    return render(req, reply, 'Audit trail', html`
      <form method="get" action="/console/audit" class="action">
        <label for="actor">Actor</label><input id="actor" name="actor" value=${filter.actor ?? ''} />
        <label for="action">Action</label><input id="action" name="action" value=${filter.action ?? ''} />
        <label for="target">Target</label><input id="target" name="target" value=${filter.target ?? ''} />
        <button type="submit">Filter</button>
      </form>
      ${Table({ caption: 'Administrative actions, newest first', head: ['#', 'Time', 'Actor', 'Role', 'Channel', 'Action', 'Target', 'Outcome', 'Change', 'Source', 'Request id'],
        rows: entries.map((e) => [e.seq, e.time, e.actor, e.role, e.channel, e.action, show(e.target), e.outcome, show(e.summary), e.sourceIp, e.requestId]),
        empty: 'No entries.' })}
      ${Pager({ label: 'Audit pages', prev: null, next: next ? `/console/audit?${new URLSearchParams([...keep, ['before', next]])}` : null })}`);
  });

  // ---- operators (admin) -----------------------------------------------------------------------------------
  app.get('/operators', async (req, reply) => {
    await need(gate, req, 'admin', 'operator.list', null);
    return operatorsPage(req, reply, null);
  });

  const operatorsPage = async (req: FastifyRequest, reply: FastifyReply, created: Awaited<ReturnType<typeof createOperator>> | null) => {
    const operators = await listOperators(deps);
    const csrf = req.console!.csrf;
    return render(req, reply, 'Operators', html`
      ${created ? html`<section aria-labelledby="created"><h2 id="created">Operator ${created.name} created</h2>
        <p>Shown only now: hand these to ${created.name} securely. They enrol the URI in an authenticator app.</p>
        <p class="secret">Password: ${created.credentials.password}<br />TOTP secret: ${created.credentials.totpSecret}<br />${created.credentials.totpUri}</p></section>` : null}
      ${Table({ caption: 'Operator accounts', head: ['Name', 'Role', 'Status', 'Locked until', 'Change'], rows: operators.map((o) => [o.name, o.role, o.status, show(o.lockedUntil),
        ActionForm({ action: `/console/operators/${o.operatorId}`, csrf, label: 'Save', children: html`
          <label for=${`role-${o.operatorId}`}>Role</label>
          <select id=${`role-${o.operatorId}`} name="role">${OPERATOR_ROLES.map((r) => html`<option value=${r} selected=${r === o.role}>${r}</option>`)}</select>
          <label for=${`status-${o.operatorId}`}>Status</label>
          <select id=${`status-${o.operatorId}`} name="status">${['ACTIVE', 'DISABLED'].map((s) => html`<option value=${s} selected=${s === o.status}>${s}</option>`)}</select>
          <label><input type="checkbox" name="unlock" value="1" /> Unlock</label>` })]) })}
      <h2>New operator</h2>
      <form method="post" action="/console/operators" class="stack">
        <input type="hidden" name="_csrf" value=${csrf} />
        <label for="new-name">Name</label><input id="new-name" name="name" required pattern="[a-z][a-z0-9._\\-]{1,39}" />
        <label for="new-role">Role</label>
        <select id="new-role" name="role">${OPERATOR_ROLES.map((r) => html`<option value=${r}>${r}</option>`)}</select>
        <button type="submit">Create operator</button>
      </form>`);
  };

  app.post('/operators', async (req, reply) => {
    const f = form(req);
    await need(gate, req, 'admin', 'operator.create', null);
    const created = await change(req, 'operator.create', String(f.name ?? ''), withoutCsrf(f), () => createOperator(deps, { name: String(f.name ?? ''), role: String(f.role ?? '') }));
    return operatorsPage(req, reply, created);
  });

  app.post('/operators/:operatorId', async (req, reply) => {
    const operatorId = checkId((req.params as { operatorId: string }).operatorId, 'Operator');
    await need(gate, req, 'admin', 'operator.update', operatorId);
    const f = form(req);
    const changes = { role: f.role, status: f.status === 'DISABLED' ? 'DISABLED' as const : f.status === 'ACTIVE' ? 'ACTIVE' as const : undefined, unlock: f.unlock === '1' };
    await change(req, 'operator.update', operatorId, changes, () => updateOperator(deps, { operatorId, ...changes }));
    return done(reply, '/console/operators', 'updated');
  });
}

/** A statement amount with its sign: + for money in, - for money out. */
function signed(amount: string): string {
  return amount.startsWith('-') || /^0(\.0*)?$/.test(amount) ? amount : `+${amount}`;
}

function h2Table(title: string, head: string[], rows: unknown[][]) {
  return html`<h2>${title}</h2>${Table({ caption: title, head, rows: rows as never })}`;
}

function txRow(t: TransactionView) {
  return [
    link(`/console/transactions/${t.transId}`, t.transId), show(t.transactionTime), `${t.messageType} ${t.authType}`, `${show(t.amount)} ${t.currency}`,
    show(t.merchantName), t.status,
    t.declineReason ? html`<span class="declined">${t.declineReason}</span>${t.declineDetail ? ` (${t.declineDetail})` : ''}` : '—',
    t.partnerDecision ? `${t.partnerDecision.outcome}, ${t.partnerDecision.latencyMs} ms${t.partnerDecision.standInReason ? ` (stand-in: ${t.partnerDecision.standInReason})` : ''}` : '—',
  ];
}

type EventItem = { eventId: string; eventType: string; status: string; attempts: number; createTime: string | null; lastHttpStatus: number | null };

function eventTable(events: EventItem[], partnerId: string, csrf: string) {
  return Table({ caption: 'Events, newest first', head: ['Event', 'Type', 'Created', 'Status', 'Attempts', 'Last HTTP status', 'Resend'], empty: 'No events.',
    rows: events.map((e) => [e.eventId, e.eventType, show(e.createTime), e.status, String(e.attempts), show(e.lastHttpStatus),
      ActionForm({ action: `/console/partners/${partnerId}/events/${e.eventId}/resend`, csrf, label: `Resend ${e.eventId}` })]) });
}
