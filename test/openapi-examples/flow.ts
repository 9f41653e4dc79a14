import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { stringify } from 'lossless-json';
import type { TestService } from '../helpers/service.ts';
import { fundedCard, networkClient, purchase } from '../helpers/authorization.ts';
import { issueCard, runJobs } from '../helpers/cards.ts';
import { creditUser, newUserId } from '../helpers/managed.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { ROOT } from '../helpers/compiled-service.ts';
import { decimal, type SignedHttpClient } from '../../sdk/index.ts';
import { stepBacktests } from '../../src/domains/authorization/testing.ts';

/**
 * Issue 32, item 7: the sandbox flow whose real answers are the OpenAPI document's response
 * examples (src/openapi-examples.json). It walks EVERY operation of the document, generically: the
 * request is the operation's own request example (or its required query parameters) with the ids
 * of a real world (company, employee, card, transaction, rule, event, managed user, ...) put in by
 * field name; an operation the generic request cannot succeed on gets a STEP below. The success
 * example is the first SYS_SUCCESS answer; the error example the first other answer, else the
 * same request with its required input left out (a validation error), else unauthenticated.
 *
 * A new route needs nothing here unless its generic request fails: then add a STEP (or a world
 * value), and regenerate: `npm run openapi:examples`.
 */

type Json = Record<string, unknown>;
export type Auth = 'partner' | 'admin' | 'network' | 'none';

export interface Operation {
  /** `METHOD /path` as in the document. */
  key: string;
  method: 'GET' | 'POST';
  path: string;
  auth: Auth;
  op: Json;
}

export interface Answer {
  status: number;
  body: Json;
}

export interface RecordedExamples {
  success?: Answer;
  error?: Answer;
}

interface Request {
  path?: string;
  query?: Record<string, unknown>;
  body?: unknown;
}

/** Operations not answered with a JSON envelope (a WebSocket upgrade): no response examples. */
export const WITHOUT_EXAMPLES: Record<string, string> = {
  'GET /card/v1/ws': 'WebSocket upgrade: its messages are documented in docs/push.md',
};

/** Run last, in this order: they freeze, end or revoke what the other operations use. */
const LAST = [
  'POST /open-api-corp/card/v1/block', 'POST /open-api-corp/card/v1/unblock',
  'POST /open-api-corp/organization/v1/update-restrictions', 'POST /open-api-corp/customer/v1/update-restrictions',
  'POST /internal/admin/v1/restrictions', 'POST /internal/admin/v1/suspensions', 'POST /internal/admin/v1/managed-users/restrictions',
  'POST /open-api-corp/card/v1/cancel', 'POST /open-api-corp/customer/v1/terminate', 'POST /internal/admin/v1/organizations/terminate',
  'POST /internal/admin/v1/network-keys/revoke', 'POST /internal/admin/v1/card-keys/rotate', 'POST /internal/admin/v1/card-keys/reencrypt',
  'POST /internal/admin/v1/service-keys/rotate',
];

export interface World {
  svc: TestService;
  values: Record<string, unknown>;
  network: SignedHttpClient;
  partnerHttp: SignedHttpClient;
  receiver: WebhookReceiver;
}

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** Per-operation requests where the generic one cannot succeed (the world's values are in w.values). */
const STEPS: Record<string, (w: World) => Promise<Request> | Request> = {
  'GET /internal/open-api/v1/secret-extract/{extractSecretKey}': async (w) => {
    const email = `${unique('ops')}@partner.example`;
    const { partner } = await w.svc.newPartner();
    await w.svc.admin.call('POST', '/internal/admin/v1/credential-links', { body: { partnerId: partner.partnerId, email, retrievalIp: '127.0.0.1' } });
    const mail = await w.svc.admin.call<{ result: { body: string }[] }>('GET', '/internal/admin/v1/outbox-mail', { query: { recipient: email } });
    const key = /extractSecretKey: (\S+)/.exec(mail.result[0].body)?.[1];
    return { path: `/internal/open-api/v1/secret-extract/${key}` };
  },
  'POST /open-api-corp/customer/v1/terminate': async (w) => ({ body: { customerId: await freshCustomer(w, true), remark: 'left the company' } }),
  'POST /card/v2/send-verification-code': (w) => ({ body: { externalUserId: w.values.externalUserId, cardId: w.values.consumerCardId, channel: 'EMAIL' } }),
  'POST /internal/admin/v1/assets': (w) => ({ body: { asset: 'PYUSD', network: 'ETH', logo: 'https://assets.example/pyusd.png', scale: 6, usdPegged: true, status: 'ACTIVE', sortOrder: 4 } }),
  'POST /internal/admin/v1/card-profiles': (w) => ({ body: {
    cardProfileId: unique('acme-visa'), partnerId: w.values.partnerId, profileName: 'Acme VISA virtual', cardNetwork: 'VISA', cardForm: 'VIRTUAL',
    balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462270', status: 'ACTIVE',
  } }),
  'POST /internal/admin/v1/partners': () => ({ body: { name: 'Acme Wallet', webhookUrl: 'https://partner.example/webhooks' } }),
  'POST /internal/network/v1/clearing': async (w) => ({ body: { networkTransactionId: unique('net'), originalNetworkTransactionId: await freshNetworkAuthorization(w), amount: decimal('3.21') } }),
  'POST /internal/network/v1/reversal': async (w) => ({ body: { networkTransactionId: unique('net'), originalNetworkTransactionId: await freshNetworkAuthorization(w), amount: decimal('1.00') } }),
  'POST /internal/network/v1/qr-payment': (w) => ({ body: {
    networkTransactionId: unique('net'), transType: 'PAY', partnerId: w.values.partnerId, externalUserId: w.values.externalUserId, asset: 'USDT',
    amount: decimal('2.50'), merchantName: 'Noodle bar', merchantCountry: 'HK', mcc: '5814',
  } }),
  'POST /open-api/sandbox/v1/simulate/qr-payment': (w) => ({ body: { transType: 'PAY', externalUserId: w.values.externalUserId, asset: 'USDT', amount: decimal('4.20'), merchantName: 'Noodle bar' } }),
  'POST /user-asset/v1/convert': (w) => ({ body: { externalTranId: unique('cv'), externalUserId: w.values.externalUserId, fromAsset: 'USDT', toAsset: 'USDC', amount: decimal('10.00') } }),
  'POST /user-asset/v1/transaction-detail': (w) => ({ body: { externalUserId: w.values.externalUserId, externalTranId: w.values.externalTranId } }),
  'POST /open-api-corp/velocity/v1/create-rule': (w) => ({ body: {
    organizationId: w.values.organizationId, ruleRef: unique('rule'), ruleName: 'Coffee only',
    purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: decimal('50.00'), daily: decimal('200.00') }], countLimits: { daily: 10 } },
    mccControl: { filterType: 'WHITELIST', values: ['5814'] }, geographicControl: { filterType: 'BLACKLIST', values: ['KP'] },
  } }),
  'POST /open-api-corp/velocity/v1/update-rule': (w) => ({ body: {
    organizationId: w.values.organizationId, ruleId: w.values.ruleId, ruleVersion: 1, ruleName: 'Daily limit',
    purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('600.00') }] },
  } }),
  'POST /open-api-corp/velocity/v1/change-rule-status': async (w) => {
    const client = w.svc.clientFor(w.values.partner as never);
    const rule = await client.velocity.createRule({
      organizationId: String(w.values.organizationId), ruleRef: unique('rule'), ruleName: 'Paused limit', purchaseControl: { countLimits: { daily: 5 } },
    });
    return { body: { organizationId: w.values.organizationId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: rule.ruleVersion } };
  },
  'POST /open-api-corp/velocity/v1/backtest': (w) => ({ body: backtestBody(w) }),
  'POST /open-api-corp/velocity/v1/backtest-detail': async (w) => {
    const client = w.svc.clientFor(w.values.partner as never);
    const started = await client.velocity.backtest(backtestBody(w) as never);
    for (let i = 0; i < 10 && (await stepBacktests({ db: w.svc.db, clock: w.svc.ctx.clock })).length > 0; i++);
    return { body: { backtestId: started.backtestId } };
  },
  'GET /open-api-corp/velocity/v1/list-subject-rules': (w) => ({ query: { organizationId: w.values.organizationId, subjectType: 'CARD', subjectId: w.values.cardId } }),
  'GET /open-api-corp/velocity/v1/query-quota': (w) => ({ query: { organizationId: w.values.organizationId, subjectType: 'CARD', subjectId: w.values.cardId, currency: 'USD' } }),
  'POST /open-api-corp/card/v1/upgrade-physical': async (w) => ({ body: {
    cardId: (await issueCard(w.svc, w.values.cardWorld as never)).cardId, upgradeRef: unique('upgrade'), cardProfileId: 'sbx-visa-shared-physical',
  } }),
  'GET /open-api-corp/card/v1/upgrade-detail': async (w) => ({ query: { upgradeRef: (await upgraded(w)).upgradeRef } }),
  'POST /open-api-corp/card/v1/cancel-upgrade': async (w) => ({ body: { upgradeRef: (await upgraded(w)).upgradeRef } }),
  'POST /open-api-corp/card/v1/activate-physical': async (w) => {
    const u = await upgraded(w, { shipped: true });
    return { body: { cardId: u.cardId, activationCode: u.activationCode } };
  },
  'POST /open-api/sandbox/v1/simulate/card-shipment': async (w) => ({ body: {
    upgradeRef: (await upgraded(w, { producing: true })).upgradeRef, status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD014600003828',
  } }),
  'POST /card/v2/upgrade-physical': async (w) => {
    const client = w.svc.clientFor(w.values.partner as never);
    const card = await client.consumerCards.apply({
      externalUserId: String(w.values.externalUserId), cardProfileId: 'sbx-visa-consumer', cardholderName: 'ADA LOVELACE', fundingAsset: 'USDT', email: 'ada@example.com',
    });
    await runJobs(w.svc);
    return { body: { ...CONSUMER_SHIPPING, externalUserId: w.values.externalUserId, cardId: card.cardId, upgradeRef: unique('upgrade'), cardProfileId: 'sbx-visa-consumer-physical' } };
  },
  'GET /card/v2/upgrade-detail': async (w) => ({ query: { externalUserId: w.values.externalUserId, upgradeRef: (await upgraded(w, { consumer: true })).upgradeRef } }),
  'POST /card/v2/cancel-upgrade': async (w) => ({ body: { externalUserId: w.values.externalUserId, upgradeRef: (await upgraded(w, { consumer: true })).upgradeRef } }),
  'POST /card/v2/activate-physical': async (w) => {
    const u = await upgraded(w, { consumer: true, shipped: true });
    return { body: { externalUserId: w.values.externalUserId, cardId: u.cardId, activationCode: u.activationCode } };
  },
  'POST /internal/admin/v1/card-upgrades/status': async (w) => ({ body: {
    partnerId: w.values.partnerId, upgradeRef: (await upgraded(w, { producing: true })).upgradeRef, status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD014600003829',
  } }),
  'POST /internal/admin/v1/card-upgrades/unlock-activation': async (w) => ({ body: { partnerId: w.values.partnerId, upgradeRef: (await upgraded(w, { shipped: true })).upgradeRef } }),
  // Not HK: the world's companies and employees are in Hong Kong, and later steps issue cards to them.
  'POST /internal/admin/v1/sanctioned-countries/update': () => ({ body: { addCountries: ['KP'], removeCountries: [] } }),
  'POST /internal/admin/v1/operators': () => ({ body: { name: unique('ops.support').replace('-', '.'), role: 'support' } }),
  'POST /internal/admin/v1/operators/update': async (w) => {
    const created = await w.svc.admin.call<{ operatorId: string }>('POST', '/internal/admin/v1/operators', { body: { name: unique('ops.risk').replace('-', '.'), role: 'risk' } });
    return { body: { operatorId: created.operatorId, role: 'viewer' } };
  },
  'POST /open-api-corp/velocity/v1/bind-rule': (w) => ({ body: { organizationId: w.values.organizationId, ruleId: w.values.ruleId, subjectType: 'CARD', subjectIds: [w.values.cardId] } }),
  'POST /open-api-corp/velocity/v1/unbind-rule': (w) => ({ body: { organizationId: w.values.organizationId, ruleId: w.values.ruleId, subjectType: 'CARD', subjectIds: [w.values.cardId] } }),
  'POST /open-api-corp/customer/v1/resubmit': async (w) => {
    const customer = await w.svc.clientFor(w.values.partner as never).customers.create({
      organizationId: String(w.values.organizationId), customerRef: unique('resubmit'), firstName: 'Bo', lastName: 'Chan',
      phoneCountryCode: 'HK', phoneNumber: '91234568', email: 'bo.chan@example.com',
    });
    await w.svc.clientFor(w.values.partner as never).sandbox.kycDecision({ customerId: customer.customerId, decision: 'REJECTED', reason: 'document unreadable' });
    return { body: { customerId: customer.customerId } };
  },
  // A real change of name starts a KYC review: on an employee of its own, not the card holder.
  'POST /open-api-corp/customer/v1/update-name': async (w) => ({ body: { customerId: await freshCustomer(w, true), firstName: 'Alicia', lastName: 'Tan' } }),
  'POST /internal/admin/v1/kyc-decisions': async (w) => ({ body: { customerId: await freshCustomer(w, false), decision: 'APPROVED' } }),
  'POST /open-api/sandbox/v1/simulate/deposit': (w) => ({ body: { subjectType: 'ORGANIZATION', subjectId: w.values.organizationId, currency: 'USD', amount: decimal('250.00') } }),
  'POST /open-api/sandbox/v1/simulate/kyc-decision': async (w) => {
    const customer = await w.svc.clientFor(w.values.partner as never).customers.create({
      organizationId: String(w.values.organizationId), customerRef: unique('kyc'), firstName: 'Cy', lastName: 'Lam',
      phoneCountryCode: 'HK', phoneNumber: '91234569', email: 'cy.lam@example.com',
    });
    return { body: { customerId: customer.customerId, decision: 'APPROVED' } };
  },
  'POST /open-api/webhook/v1/resend': (w) => ({ body: { eventId: w.values.eventId } }),
  'POST /open-api/sandbox/v1/simulate/clearing': async (w) => ({ body: { transId: await freshAuthorization(w), amount: decimal('12.34') } }),
  'POST /open-api/sandbox/v1/simulate/reversal': async (w) => ({ body: { transId: await freshAuthorization(w), amount: decimal('2.00') } }),
  'POST /open-api/sandbox/v1/simulate/refund': (w) => ({ body: { cardId: w.values.cardId, amount: decimal('5.00'), currency: 'USD', merchantName: 'Blue Bottle Coffee', transId: w.values.transId } }),
  'POST /open-api/sandbox/v1/simulate/authorization': (w) => ({ body: purchase(String(w.values.cardId), '12.34') }),
  'POST /internal/network/v1/authorization': (w) => ({ body: { ...purchase(String(w.values.cardId), '3.21'), networkTransactionId: unique('net') } }),
  'POST /internal/network/v1/refund': (w) => ({ body: { cardId: w.values.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'Blue Bottle Coffee', networkTransactionId: unique('net') } }),
  'POST /open-api-corp/fund/v1/transfer': (w) => ({ body: {
    organizationId: w.values.organizationId, cardId: w.values.dedicatedCardId, direction: 'POOL_TO_CARD', currency: 'USD', amount: decimal('10.00'), externalTranId: unique('tf'),
  } }),
  'POST /open-api-corp/card/v1/open-va': (w) => ({ body: { cardId: w.values.dedicatedCardId, fundingCurrencies: ['USD'] } }),
  'POST /open-api/webhook/v1/secret/rotate': () => ({ body: { overlapSeconds: 0 } }),
  'POST /internal/admin/v1/partners/update': (w) => ({ body: { partnerId: w.values.partnerId, name: 'Acme Wallet' } }),
  'POST /internal/admin/v1/card-keys/rotate': () => ({ body: { purpose: 'PAN_DATA' } }),
  'POST /internal/admin/v1/card-keys/reencrypt': () => ({ body: { limit: 10 } }),
  'POST /internal/admin/v1/network-keys/revoke': async (w) => {
    const key = await w.svc.admin.createNetworkKey({ name: unique('processor') });
    return { body: { networkKeyId: key.networkKeyId } };
  },
};

/** A physical upgrade of a fresh card (issue 30), shipped when asked: corporate, or of the world's managed user. */
async function upgraded(w: World, options: { consumer?: boolean; producing?: boolean; shipped?: boolean } = {}): Promise<{ cardId: string; upgradeRef: string; activationCode?: string }> {
  const client = w.svc.clientFor(w.values.partner as never);
  const upgradeRef = unique('upgrade');
  let cardId: string;
  if (options.consumer) {
    const card = await client.consumerCards.apply({
      externalUserId: String(w.values.externalUserId), cardProfileId: 'sbx-visa-consumer', cardholderName: 'ADA LOVELACE', fundingAsset: 'USDT',
      email: 'ada@example.com', phoneCountryCode: 'HK', phoneNumber: '91234567',
    } as never);
    await runJobs(w.svc);
    cardId = String(card.cardId);
    await client.consumerCards.upgradePhysical({ ...CONSUMER_SHIPPING, externalUserId: String(w.values.externalUserId), cardId, upgradeRef, cardProfileId: 'sbx-visa-consumer-physical' });
  } else {
    cardId = (await issueCard(w.svc, w.values.cardWorld as never)).cardId;
    await client.cards.upgradePhysical({ cardId, upgradeRef, cardProfileId: 'sbx-visa-shared-physical' });
  }
  if (!options.producing && !options.shipped) return { cardId, upgradeRef };
  await client.sandbox.cardShipment({ upgradeRef, status: 'PRODUCING' });
  if (!options.shipped) return { cardId, upgradeRef };
  const shipped = await client.sandbox.cardShipment({ upgradeRef, status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD014600003828' });
  return { cardId, upgradeRef, activationCode: shipped.activationCode };
}

const CONSUMER_SHIPPING = {
  shippingAddress: { addressLine1: "1 Queen's Road Central", city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' },
  phoneCountryCode: 'HK', phoneNumber: '91234567',
};

/** An employee of the world's company of its own (KYC approved or pending). */
async function freshCustomer(w: World, approved: boolean): Promise<string> {
  const client = w.svc.clientFor(w.values.partner as never);
  const customer = await client.customers.create({
    organizationId: String(w.values.organizationId), customerRef: unique('emp'), firstName: 'Dee', lastName: 'Wong',
    phoneCountryCode: 'HK', phoneNumber: '91234560', email: 'dee.wong@example.com',
  });
  if (approved) await client.sandbox.kycDecision({ customerId: customer.customerId, decision: 'APPROVED' });
  return customer.customerId;
}

/** A fresh authorization from the card network (its clearing and reversal refer to it by networkTransactionId). */
async function freshNetworkAuthorization(w: World): Promise<string> {
  const networkTransactionId = unique('net');
  const res = await w.network.raw('POST', '/internal/network/v1/authorization', {
    body: stringify({ ...purchase(String(w.values.cardId), '3.21'), networkTransactionId }) ?? '{}',
  });
  if ((JSON.parse(res.text) as Json).code !== 'SYS_SUCCESS') throw new Error(`network authorization: ${res.text}`);
  return networkTransactionId;
}

/** A backtest of a draft rule over the world's card since yesterday (issue 31). */
function backtestBody(w: World) {
  const now = w.svc.clock.now();
  return {
    rule: {
      organizationId: w.values.organizationId, ruleRef: unique('draft'), ruleName: 'Coffee budget',
      purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: decimal('10.00'), daily: decimal('200.00') }], countLimits: { daily: 10 } },
      mccControl: { filterType: 'BLACKLIST', values: ['7995'] },
    },
    bindings: [{ subjectType: 'CARD', subjectIds: [w.values.cardId] }],
    startTime: new Date(now - 86_400_000).toISOString(), endTime: new Date(now).toISOString(), mode: 'COMBINED',
  };
}

/** A fresh approved authorization on the world's card (clearing and reversal need one each). */
async function freshAuthorization(w: World): Promise<string> {
  const client = w.svc.clientFor(w.values.partner as never);
  const t = await client.sandbox.authorize(purchase(String(w.values.cardId), '12.34'));
  return t.transId;
}

/** A partner with everything the operations refer to, made through the API as a partner would. */
export async function buildWorld(svc: TestService): Promise<World> {
  const receiver = await WebhookReceiver.start();
  const spend = await fundedCard(svc, { funds: '1000.00' });
  const { partner, client } = spend;
  receiver.useCredentials(partner);
  await svc.admin.updatePartner(partner.partnerId, { webhookUrl: receiver.url, pciCertified: true });
  const dedicated = await issueCard(svc, spend, { profile: 'sbx-visa-dedicated' });
  const auth = await client.sandbox.authorize(purchase(spend.card.cardId, '12.34'));
  const rule = await client.velocity.createRule({
    organizationId: spend.org.organizationId, ruleRef: unique('rule'), ruleName: 'Daily limit',
    purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('500.00') }] },
  });
  const test = await client.events.sendTest();
  const user = newUserId();
  const movement = await creditUser(client, user, 'USDT', '250.00');
  const consumer = await client.consumerCards.apply({
    externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'ADA LOVELACE', fundingAsset: 'USDT', email: 'ada@example.com',
  });
  await runJobs(svc);
  const qr = await client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: user, asset: 'USDT', amount: decimal('4.20'), merchantName: 'Noodle bar' });
  const consumerAuth = await client.sandbox.authorize(purchase(consumer.cardId ?? '', '1.00')).catch(() => null);
  const networkKey = await networkClient(svc);
  const apply = await client.cards.queryApply(dedicated.cardApplyId ?? '').catch(() => null);
  return {
    svc, receiver, network: networkKey, partnerHttp: client.http,
    values: {
      partner, cardWorld: spend, partnerId: partner.partnerId, organizationId: spend.org.organizationId, customerId: spend.employee.customerId,
      custodianCustomerId: spend.employee.customerId, cardId: spend.card.cardId, dedicatedCardId: dedicated.cardId, cardProfileId: 'sbx-visa-shared',
      cardApplyId: spend.card.cardApplyId ?? apply?.cardApplyId, cardOrderRef: apply?.cardApplyRef, transId: auth.transId, ruleId: rule.ruleId, ruleRef: rule.ruleRef,
      eventId: test.eventId, externalUserId: user, asset: 'USDT', externalTranId: movement.externalTranId, orderId: qr.orderId,
      consumerCardId: consumer.cardId, consumerTransId: consumerAuth?.transId, ids: [auth.transId],
      subjects: { ORGANIZATION: spend.org.organizationId, CUSTOMER: spend.employee.customerId, CARD: spend.card.cardId },
      retrievalIp: '203.0.113.7', ipAllowlist: ['203.0.113.0/24'],
    },
  };
}

/** Every operation of the document, with how it authenticates. */
export function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const method of ['get', 'post'] as const) {
      const op = item[method];
      if (!op) continue;
      const security = JSON.stringify(op.security ?? []);
      const auth: Auth = security.includes('adminToken') ? 'admin' : security.includes('networkKey') ? 'network' : security.includes('apiKey') ? 'partner' : 'none';
      out.push({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase() as 'GET' | 'POST', path, auth, op });
    }
  }
  return out;
}

/** The world's value for a field, or undefined to keep the example's. */
function worldValue(w: World, key: string, sibling: Json, inQuery = false): unknown {
  const v = w.values;
  if (inQuery && key === 'externalTranId') return v.externalTranId;

  if (key === 'subjectId' && typeof sibling.subjectType === 'string') return (v.subjects as Json)[sibling.subjectType] ?? v.organizationId;
  if (/Ref$/.test(key) && key !== 'cardOrderRef' && key !== 'ruleRef') return unique(key.replace(/Ref$/, ''));
  if (key === 'externalTranId' || key === 'networkTransactionId') return unique(key);
  // A change that adds and removes the same code is refused: the example removes nothing.
  if (/^remove[A-Z]/.test(key) && `add${key.slice(6)}` in sibling) return [];
  if ((key === 'cardId' || key === 'transId') && typeof sibling.externalUserId === 'string') return key === 'cardId' ? v.consumerCardId : v.consumerTransId;
  if (key === 'cardProfileId' && typeof sibling.externalUserId === 'string') return 'sbx-visa-consumer';
  return key in v && !['partner', 'subjects'].includes(key) ? v[key] : undefined;
}

/** The example with the world's ids put in by field name. */
function withWorld(w: World, node: unknown, key = '', parent: Json = {}): unknown {
  if (Array.isArray(node)) {
    const whole = worldValue(w, key, parent);
    return Array.isArray(whole) ? whole : node.map((item) => withWorld(w, item, key.replace(/s$/, ''), parent));
  }
  if (node === null || typeof node !== 'object') {
    const value = worldValue(w, key, parent);
    return value === undefined ? node : value;
  }
  const obj = node as Json;
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, withWorld(w, v, k, obj)]));
}

function genericRequest(w: World, op: Operation): Request {
  const query: Json = {};
  for (const p of (op.op.parameters ?? []) as Json[]) {
    if (p.in !== 'query') continue;
    const name = String(p.name);
    const value = worldValue(w, name, query, true) ?? (p.required ? (p.example ?? (p.schema as Json | undefined)?.default ?? sampleText(p.schema as Json)) : undefined);
    if (value !== undefined) query[name] = value;
  }
  if (typeof query.subjectType === 'string' && 'subjectId' in query) query.subjectId = (w.values.subjects as Json)[query.subjectType];
  const example = ((op.op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.['application/json']?.example;
  return { query, body: example === undefined ? undefined : withWorld(w, example) };
}

function sampleText(schema: Json | undefined): unknown {
  if (!schema) return 'x';
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.anyOf)) return sampleText(schema.anyOf[0] as Json);
  if ('const' in schema) return schema.const;
  return schema.type === 'integer' || schema.type === 'number' ? (schema.minimum ?? 1) : 'x';
}

async function send(w: World, op: Operation, req: Request, broken = false): Promise<Answer> {
  const path = req.path ?? op.path;
  const query = Object.fromEntries(Object.entries(req.query ?? {}).map(([k, v]) => [k, String(v)]));
  const body = op.method === 'POST' ? stringify(req.body ?? {}) ?? '{}' : undefined;
  if (op.auth === 'partner' || op.auth === 'network') {
    const http = op.auth === 'partner' ? w.partnerHttp : w.network;
    const res = await http.raw(op.method, path, { query, body, ...(broken ? { headers: { 'X-DAPI-SIGN': '0'.repeat(64) } } : {}) });
    return { status: res.status, body: JSON.parse(res.text) as Json };
  }
  const url = `${w.svc.baseUrl}${path}${Object.keys(query).length ? `?${new URLSearchParams(query)}` : ''}`;
  const headers: Record<string, string> = op.method === 'POST' ? { 'content-type': 'application/json' } : {};
  if (op.auth === 'admin') headers.authorization = `Bearer ${broken ? 'not-the-admin-token-000' : (w.svc.config.adminToken)}`;
  const res = await fetch(url, { method: op.method, headers, body });
  return { status: res.status, body: (await res.json()) as Json };
}

const isSuccess = (a: Answer) => a.body.code === 'SYS_SUCCESS';

/** Runs the flow over the operations; returns what each answered. */
export async function runExampleFlow(svc: TestService, doc: Json): Promise<Record<string, RecordedExamples>> {
  const w = await buildWorld(svc);
  const ops = operationsOf(doc).filter((o) => !(o.key in WITHOUT_EXAMPLES));
  const rank = (o: Operation) => (LAST.includes(o.key) ? 1 + LAST.indexOf(o.key) : 0);
  ops.sort((a, b) => rank(a) - rank(b));
  const recorded: Record<string, RecordedExamples> = {};
  try {
    for (const op of ops) {
      const entry: RecordedExamples = {};
      recorded[op.key] = entry;
      const step = STEPS[op.key];
      const request = step ? await step(w) : genericRequest(w, op);
      const answer = await send(w, op, request);
      if (isSuccess(answer)) entry.success = answer;
      else entry.error = answer;
      if (!entry.error) {
        // Required input left out: the operation's own validation error.
        const empty = op.method === 'POST' ? { path: request.path, body: {} } : { path: request.path, query: {} };
        const invalid = await send(w, op, empty);
        entry.error = isSuccess(invalid) ? await send(w, op, request, true) : invalid;
        if (isSuccess(entry.error)) delete entry.error;
      }
    }
  } finally {
    await w.receiver.close();
  }
  return recorded;
}

/** Where the examples live: the service reads them into its OpenAPI document. */
export const EXAMPLES_FILE = path.join(ROOT, 'src', 'openapi-examples.json');

/** Ids, times and secrets differ per run; the examples keep the shape, these fields get fixed placeholders. */
const SECRET_FIELDS = /secret|apiKey|token|password|privateKey|webhookSecret/i;

export function sanitize(node: unknown, key = ''): unknown {
  if (Array.isArray(node)) return node.map((item) => sanitize(item, key));
  if (node !== null && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, sanitize(v, k)]));
  if (typeof node === 'string' && SECRET_FIELDS.test(key) && node.length > 0) return `<${key} of the sandbox partner>`;
  return node;
}

/** The field paths of an answer (array items merged): what a regenerated example must keep. */
export function shapeOf(node: unknown, prefix = '$'): string[] {
  if (Array.isArray(node)) return [...new Set(node.flatMap((item) => shapeOf(item, `${prefix}[]`)))].sort();
  if (node !== null && typeof node === 'object') {
    return Object.entries(node).flatMap(([k, v]) => [`${prefix}.${k}`, ...shapeOf(v, `${prefix}.${k}`)]).sort();
  }
  return [];
}
