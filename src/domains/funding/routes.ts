import { Type } from 'typebox';
import { IsoTime, Money, Page, PagingQuery } from '../../platform/http/schema.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { FundingCurrency, OrganizationId } from '../organizations/index.ts';
import { fundBalance, queryBalanceAlerts, setBalanceAlerts, statement, THRESHOLD_RULES, type FundingDeps } from './service.ts';

/** Section 8: alert mailboxes up to 128 characters. */
export const ALERT_EMAIL_MAX = 128;
/** Not in the spec: at most this many alert mailboxes per company. */
export const ALERT_EMAILS_MAX = 10;
/** Two currencies exist; a longer list necessarily repeats one (DAPI_PARAM_INVALID either way). */
const BALANCE_SETTINGS_MAX = 10;

const BalanceView = {
  currency: Type.String(),
  available: Money({ maxScale: 18, sign: 'any' }),
  pending: Money({ maxScale: 18, sign: 'nonNegative' }),
  total: Money({ maxScale: 18, sign: 'any' }),
};

const Threshold = Money(THRESHOLD_RULES, { description: 'Non-negative, at most two decimal places' });

export function fundingRoutes(deps: FundingDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/balance',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Funding pool and dedicated card balances of a company (D29, D48)',
      querystring: Type.Object({ organizationId: OrganizationId }),
      data: Type.Object({
        organizationId: Type.String(),
        pools: Type.Array(Type.Object(BalanceView)),
        cards: Type.Array(Type.Object({ cardId: Type.String(), ...BalanceView })),
      }),
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => fundBalance(deps, partner.partnerId, query.organizationId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/statement',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Every movement of the company funding pools, or of a dedicated card\'s balance, newest first (D29)',
      description: 'One line per posting and pool: amount = availableChange + pendingChange; the balances after the movement. startTime is inclusive, endTime exclusive.',
      querystring: Type.Object({
        organizationId: OrganizationId,
        cardId: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'A dedicated card of the company: the movements of its own balance' })),
        currency: Type.Optional(FundingCurrency),
        startTime: Type.Optional(IsoTime),
        endTime: Type.Optional(IsoTime),
        ...PagingQuery,
      }),
      data: Page(Type.Object({
        statementId: Type.String(),
        postingId: Type.String(),
        currency: Type.String(),
        type: Type.String({ description: 'DEPOSIT, TRANSFER, AUTHORIZATION, CLEARING, ...' }),
        amount: Money({ maxScale: 18, sign: 'any' }),
        availableChange: Money({ maxScale: 18, sign: 'any' }),
        pendingChange: Money({ maxScale: 18, sign: 'any' }),
        availableAfter: Money({ maxScale: 18, sign: 'any' }),
        pendingAfter: Money({ maxScale: 18, sign: 'nonNegative' }),
        totalAfter: Money({ maxScale: 18, sign: 'any' }),
        reference: Type.Union([Type.String(), Type.Null()]),
        description: Type.Union([Type.String(), Type.Null()]),
        createTime: Type.String(),
      })),
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => statement(deps, partner.partnerId, query, { page: query.page ?? 1, pageSize: query.pageSize ?? 20 }),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/fund/v1/balance-alert-set',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Replace the low-balance alert configuration of a company (4.6, 2.12)',
      description: 'Full replacement: send the complete list every time. The threshold field is `threshold`; `thresholdAmount` is accepted as an alias (D41); both present with different values is DAPI_PARAM_INVALID. Omitting emailSettings clears the mailboxes (webhook only).',
      body: Type.Object({
        organizationId: OrganizationId,
        balanceSettings: Type.Array(Type.Object({
          currency: FundingCurrency,
          threshold: Type.Optional(Threshold),
          thresholdAmount: Type.Optional(Threshold),
        }), { minItems: 1, maxItems: BALANCE_SETTINGS_MAX }),
        emailSettings: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: ALERT_EMAIL_MAX }), { maxItems: ALERT_EMAILS_MAX })),
      }),
      errors: ['SUBJECT_INVALID', 'BALANCE_ALERT_CURRENCY_NO_POOL'],
      handler: ({ body, partner }) => setBalanceAlerts(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/balance-alert-query',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Read the low-balance alert configuration of a company',
      querystring: Type.Object({ organizationId: OrganizationId }),
      data: Type.Object({
        organizationId: Type.String(),
        balanceSettings: Type.Array(Type.Object({ currency: Type.String(), threshold: Threshold })),
        emailSettings: Type.Array(Type.String()),
      }),
      errors: ['SUBJECT_INVALID'],
      handler: ({ query, partner }) => queryBalanceAlerts(deps, partner.partnerId, query.organizationId),
    }),
  ];
}
