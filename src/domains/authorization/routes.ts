import { Type, type Static, type TObject } from 'typebox';
import { PagingQuery } from '../../platform/http/schema.ts';
import type { ErrorCode } from '../../platform/errors.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  AuthUrlTestReport, ListTransactionsQuery, NetworkAuthorizationBody, NetworkKeyOut, ServicePublicKey, NetworkKeyBody, NetworkRefundBody, NetworkSettleBody, ResolveBody, ResolvedOut,
  SimulateAuthorizationBody, SimulateRefundBody, SimulateSettleBody, TransactionOut, TransactionPageOut,
} from './schemas.ts';
import { createNetworkKey, networkKeys, revokeNetworkKeyById } from './network-keys.ts';
import {
  authorize, clear, listTransactions, queryTransaction, refund, resolveIds, reverse, type AuthorizationDeps,
} from './service.ts';
import type { Config } from '../../config.ts';
import { listForwardingsPage, setForwardingSettings } from './forwarding-admin.ts';
import type { AuthUrlForwarder } from './forwarding.ts';
import type { ServiceKeys } from './service-keys.ts';
import { observedAuthorize, observedSettlement } from './observability.ts';

export type AuthorizationRouteDeps = AuthorizationDeps & { config: Config; serviceKeys: ServiceKeys; forwarder: AuthUrlForwarder };

const DECISION_NOTE = 'A decline is a success envelope with `approved: false` and `declineReason`: CARD_BLOCKED, CARD_CANCELLED, '
  + 'CAPABILITY_FROZEN (declineDetail names the subject and code), VELOCITY_LIMIT_EXCEEDED, MCC_NOT_ALLOWED, COUNTRY_NOT_ALLOWED, '
  + 'CURRENCY_NOT_ALLOWED, CASH_ADVANCE_NOT_ALLOWED, INSUFFICIENT_BALANCE, PARTNER_DECLINED, PARTNER_TIMEOUT. A decline changes no balance and no usage. '
  + 'An authorization forwarded to your auth_url always ends in one recorded decision, never an error: a failure of the service after the funds '
  + 'are held is your stand-in with declineDetail SERVICE_ERROR, and a decline after the hold gives the hold and the usage back.';
const AUTHORIZE_ERRORS: ErrorCode[] = ['CARD_INVALID'];
const SETTLE_ERRORS: ErrorCode[] = ['TRANSACTION_NOT_FOUND', 'TRANSACTION_STATUS_INVALID', 'TRANSACTION_AMOUNT_INVALID'];
const REFUND_ERRORS: ErrorCode[] = ['CARD_INVALID', 'CURRENCY_NOT_ALLOWED', 'TRANSACTION_NOT_FOUND'];

/**
 * The fields a message's schema declares, and only those. D10 keeps unknown body fields (ignored,
 * not refused), so a spread body would hand the engine fields its route does not offer: a sandbox
 * simulation naming `networkTransactionId` was answered another partner's transaction record with
 * that id (card, merchant, amounts) and took network ids before the network sent them, and an
 * unchecked `transactionTime` or refund `mcc` reached the database. Sandbox simulations get a fresh
 * id each (docs/authorizations.md "Idempotency of network messages").
 */
function declaredFields<T extends TObject>(schema: T, body: Static<T>): Static<T> {
  const fields = body as Record<string, unknown>;
  return Object.fromEntries(Object.keys(schema.properties).filter((k) => fields[k] !== undefined).map((k) => [k, fields[k]])) as Static<T>;
}

/** Sandbox simulations of D40 (partner-signed, sandbox only), the network ingress, and the partner reads. */
export function authorizationRoutes(deps: AuthorizationRouteDeps): RouteDef[] {
  const paging = (q: { page?: number; pageSize?: number }) => ({ page: q.page ?? 1, pageSize: q.pageSize ?? 20 });
  return [
    // ---- Sandbox (D40) ----
    route({
      method: 'POST', url: '/open-api/sandbox/v1/simulate/authorization', auth: 'partner', tag: 'Sandbox', sandboxOnly: true,
      summary: 'Simulate a card authorization through the full pipeline',
      description: `Runs exactly the engine the card network ingress runs. ${DECISION_NOTE} When currency is not a settlement currency of the card, send billingAmount and billingCurrency (the network's conversion); otherwise the decline is CURRENCY_NOT_ALLOWED.`,
      body: SimulateAuthorizationBody, data: TransactionOut, errors: AUTHORIZE_ERRORS,
      handler: ({ body, partner }) => observedAuthorize('SANDBOX', () => authorize(deps, { ...declaredFields(SimulateAuthorizationBody, body), source: 'SANDBOX', partnerId: partner.partnerId })),
    }),
    route({
      method: 'POST', url: '/open-api/sandbox/v1/simulate/clearing', auth: 'partner', tag: 'Sandbox', sandboxOnly: true,
      summary: 'Simulate the clearing of an authorization',
      description: 'Releases what is still held and posts `amount` (billing currency of the authorization): equal, smaller (the rest returns to free) or larger (posted even if free goes negative). Answers the CLEARING record; its postedTransactionId is the posted id.',
      body: SimulateSettleBody, data: TransactionOut, errors: SETTLE_ERRORS,
      handler: ({ body, partner }) => observedSettlement('clearing', 'SANDBOX', () => clear(deps, { source: 'SANDBOX', authorization: { transId: body.transId, partnerId: partner.partnerId }, amount: body.amount })),
    }),
    route({
      method: 'POST', url: '/open-api/sandbox/v1/simulate/reversal', auth: 'partner', tag: 'Sandbox', sandboxOnly: true,
      summary: 'Simulate a full or partial reversal of an authorization',
      description: 'Releases `amount` of the hold to free and gives the velocity usage back in the periods of the original authorization (the count when the hold reaches zero). Answers the REVERSAL record.',
      body: SimulateSettleBody, data: TransactionOut, errors: SETTLE_ERRORS,
      handler: ({ body, partner }) => observedSettlement('reversal', 'SANDBOX', () => reverse(deps, { source: 'SANDBOX', authorization: { transId: body.transId, partnerId: partner.partnerId }, amount: body.amount })),
    }),
    route({
      method: 'POST', url: '/open-api/sandbox/v1/simulate/refund', auth: 'partner', tag: 'Sandbox', sandboxOnly: true,
      summary: 'Simulate a merchant refund to a card',
      description: 'Credits free of the card\'s funds (the company pool or the dedicated balance); velocity usage is left alone. `transId` optionally names the purchase returned.',
      body: SimulateRefundBody, data: TransactionOut, errors: REFUND_ERRORS,
      handler: ({ body, partner }) => observedSettlement('refund', 'SANDBOX', () => refund(deps, {
        ...declaredFields(SimulateRefundBody, body), source: 'SANDBOX', partnerId: partner.partnerId,
        original: body.transId ? { transId: body.transId, partnerId: partner.partnerId } : undefined,
      })),
    }),

    // ---- Card network ingress (network key, D40) ----
    route({
      method: 'POST', url: '/internal/network/v1/authorization', auth: 'network', tag: 'Network ingress',
      summary: 'An authorization request from the card network',
      description: `Signed with an operator-issued network key. Idempotent on networkTransactionId: a retry is answered exactly as the first time and booked once. ${DECISION_NOTE}`,
      body: NetworkAuthorizationBody, data: TransactionOut, errors: AUTHORIZE_ERRORS,
      handler: ({ body }) => observedAuthorize('NETWORK', () => authorize(deps, { ...declaredFields(NetworkAuthorizationBody, body), source: 'NETWORK', partnerId: null })),
    }),
    route({
      method: 'POST', url: '/internal/network/v1/clearing', auth: 'network', tag: 'Network ingress',
      summary: 'A clearing (presentment) of an authorization',
      body: NetworkSettleBody, data: TransactionOut, errors: SETTLE_ERRORS,
      handler: ({ body }) => observedSettlement('clearing', 'NETWORK', () => clear(deps, {
        source: 'NETWORK', networkTransactionId: body.networkTransactionId,
        authorization: { networkTransactionId: body.originalNetworkTransactionId }, amount: body.amount,
      })),
    }),
    route({
      method: 'POST', url: '/internal/network/v1/reversal', auth: 'network', tag: 'Network ingress',
      summary: 'A full or partial reversal of an authorization',
      body: NetworkSettleBody, data: TransactionOut, errors: SETTLE_ERRORS,
      handler: ({ body }) => observedSettlement('reversal', 'NETWORK', () => reverse(deps, {
        source: 'NETWORK', networkTransactionId: body.networkTransactionId,
        authorization: { networkTransactionId: body.originalNetworkTransactionId }, amount: body.amount,
      })),
    }),
    route({
      method: 'POST', url: '/internal/network/v1/refund', auth: 'network', tag: 'Network ingress',
      summary: 'A merchant refund credited to a card',
      body: NetworkRefundBody, data: TransactionOut, errors: REFUND_ERRORS,
      handler: ({ body }) => observedSettlement('refund', 'NETWORK', () => refund(deps, {
        ...declaredFields(NetworkRefundBody, body), source: 'NETWORK', partnerId: null,
        original: body.originalNetworkTransactionId ? { networkTransactionId: body.originalNetworkTransactionId } : undefined,
      })),
    }),

    // ---- Partner reads (2.9) ----
    route({
      method: 'GET', url: '/open-api-corp/transaction/v1/list', auth: 'partner', tag: 'Transactions',
      summary: 'Card transactions of the partner, newest first',
      description: 'Filters: organizationId, cardId, customerId (the employee\'s cards), status, messageType, startTime (inclusive) and endTime (exclusive) on createTime. Unknown or other partners\' ids give an empty page.',
      querystring: ListTransactionsQuery, data: TransactionPageOut, errors: [],
      handler: ({ query, partner }) => listTransactions(deps, partner.partnerId, query, paging(query)),
    }),
    route({
      method: 'GET', url: '/open-api-corp/transaction/v1/query', auth: 'partner', tag: 'Transactions',
      summary: 'One card transaction by transId',
      querystring: Type.Object({ transId: Type.String({ minLength: 1, maxLength: 20 }) }), data: TransactionOut, errors: ['TRANSACTION_NOT_FOUND'],
      handler: ({ query, partner }) => queryTransaction(deps, partner.partnerId, query.transId),
    }),
    route({
      method: 'POST', url: '/card/v1/transaction/id/resolve', auth: 'partner', tag: 'Transactions',
      summary: 'Whether outstanding or posted transaction ids have been posted, and the linked id',
      description: 'For any card of the partner. One answer per requested id, in order; an unknown or another partner\'s id is `found: false`.',
      body: ResolveBody, data: ResolvedOut, errors: [],
      handler: ({ body, partner }) => resolveIds(deps, partner.partnerId, body.ids),
    }),

    // ---- Authorization forwarding (5.6, D37, D50) ----
    route({
      method: 'GET', url: '/open-api/v1/service-public-key', auth: 'partner', tag: 'Authorization forwarding',
      summary: 'The service RSA public key your auth_url verifies requests with and encrypts answers to',
      description: 'X.509 SubjectPublicKeyInfo DER, Base64 (what Java\'s X509EncodedKeySpec reads). Requests name the key that signed them in the X-DAPI-SERVICE-KEY-ID header; after a rotation answer with the key the request names.',
      data: ServicePublicKey,
      errors: [],
      handler: async () => {
        const key = await deps.serviceKeys.activeKey();
        return { keyId: key.keyId, publicKey: key.publicKeyBase64, algorithm: 'RSA-2048', signatureAlgorithm: 'SHA256withRSA', encryption: 'RSA/ECB/PKCS1Padding, 245-byte blocks' };
      },
    }),
    route({
      method: 'POST', url: '/open-api/sandbox/v1/auth-url/test', auth: 'partner', tag: 'Sandbox', sandboxOnly: true,
      summary: 'Send a test authorization to your auth_url and read what happened',
      description: 'Nothing is booked. Reports whether the request was delivered, whether your answer decrypted and verified, your decision, the stand-in reason otherwise, and the latency.',
      data: AuthUrlTestReport,
      errors: [],
      handler: ({ partner }) => deps.forwarder.test(partner.partnerId),
    }),

    // ---- Operators ----
    route({
      method: 'GET', url: '/internal/admin/v1/service-keys', auth: 'admin', role: 'viewer', tag: 'Admin',
      summary: 'The service RSA keys: the ACTIVE one and RETIRED ones (public parts only)',
      errors: [],
      handler: () => deps.serviceKeys.list(),
    }),
    route({
      method: 'POST', url: '/internal/admin/v1/service-keys/rotate', auth: 'admin', tag: 'Admin',
      summary: 'Rotate the service RSA key; the previous key keeps decrypting answers to requests it signed',
      errors: [],
      handler: async () => {
        const key = await deps.serviceKeys.rotate();
        return { keyId: key.keyId, publicKey: key.publicKeyBase64 };
      },
    }),
    route({
      method: 'POST', url: '/internal/admin/v1/auth-forwarding/settings', auth: 'admin', tag: 'Admin',
      summary: 'A partner\'s answer deadline and stand-in decision (default 2000 ms, DECLINE)',
      body: Type.Object({
        partnerId: Type.String({ minLength: 1, maxLength: 20 }),
        deadlineMs: Type.Integer({ minimum: 100, maximum: 10000 }),
        standIn: Type.Union([Type.Literal('APPROVE'), Type.Literal('DECLINE')]),
      }),
      errors: ['PARTNER_INVALID'],
      handler: ({ body }) => setForwardingSettings(deps, body),
    }),
    route({
      method: 'GET', url: '/internal/admin/v1/auth-forwardings', auth: 'admin', role: 'viewer', tag: 'Admin',
      summary: 'Forwarded authorizations: outcome, stand-in reason, latency (newest first)',
      querystring: Type.Object({
        partnerId: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
        transId: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
        ...PagingQuery,
      }),
      errors: [],
      handler: ({ query }) => listForwardingsPage(deps, query, paging(query)),
    }),
    route({
      method: 'GET', url: '/internal/admin/v1/auth-forwardings/metrics', auth: 'admin', role: 'viewer', tag: 'Admin',
      summary: 'Forwardings per outcome since this instance started (a counter per outcome)',
      errors: [],
      handler: async () => ({ counters: { ...deps.forwarder.counters } }),
    }),
    route({
      method: 'POST', url: '/internal/admin/v1/network-keys', auth: 'admin', tag: 'Admin',
      summary: 'Issue a card network ingress key (shown once)',
      body: NetworkKeyBody,
      data: NetworkKeyOut,
      errors: [],
      handler: ({ body }) => createNetworkKey(deps, body),
    }),
    route({
      method: 'GET', url: '/internal/admin/v1/network-keys', auth: 'admin', role: 'viewer', tag: 'Admin',
      summary: 'List card network ingress keys (never their secrets)',
      errors: [],
      handler: () => networkKeys(deps),
    }),
    route({
      method: 'POST', url: '/internal/admin/v1/network-keys/revoke', auth: 'admin', tag: 'Admin',
      summary: 'Revoke a card network ingress key',
      body: Type.Object({ networkKeyId: Type.String({ minLength: 1, maxLength: 20 }) }),
      errors: [],
      handler: ({ body }) => revokeNetworkKeyById(deps, body.networkKeyId),
    }),
  ];
}
