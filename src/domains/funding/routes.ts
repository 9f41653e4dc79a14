import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  BalanceAlertConfig, BalanceAlertQuery, BalanceAlertSetBody, FundBalance, FundBalanceQuery, StatementPage, StatementQuery,
} from '../../../sdk/contract/funding.ts';
import { fundBalance, queryBalanceAlerts, setBalanceAlerts, statement, type FundingRouteDeps } from './service.ts';

export { ALERT_EMAIL_MAX, ALERT_EMAILS_MAX } from '../../../sdk/contract/funding.ts';


export function fundingRoutes(deps: FundingRouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/balance',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Funding pool balances and every dedicated card balance of a company',
      description: 'Pools in funding-currency order; then every DEDICATED card of the company, oldest first, one line per currency its balance holds, '
        + 'with zeros in the card\'s currency before its first movement.',
      querystring: FundBalanceQuery,
      data: FundBalance,
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => fundBalance(deps, partner.partnerId, query.organizationId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/statement',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Every movement of the company funding pools, or of a dedicated card\'s balance, newest first',
      description: 'One line per posting and pool: amount = availableChange + pendingChange; the balances after the movement. startTime is inclusive, endTime exclusive.',
      querystring: StatementQuery,
      data: StatementPage,
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => statement(deps, partner.partnerId, query, { page: query.page ?? 1, pageSize: query.pageSize ?? 20 }),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/fund/v1/balance-alert-set',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Replace the low-balance alert configuration of a company',
      description: 'Full replacement: send the complete list every time. The threshold field is `threshold`; `thresholdAmount` is accepted as an alias; both present with different values is DAPI_PARAM_INVALID. Omitting emailSettings clears the mailboxes (webhook only).',
      body: BalanceAlertSetBody,
      errors: ['SUBJECT_INVALID', 'BALANCE_ALERT_CURRENCY_NO_POOL'],
      handler: ({ body, partner }) => setBalanceAlerts(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/balance-alert-query',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Read the low-balance alert configuration of a company',
      querystring: BalanceAlertQuery,
      data: BalanceAlertConfig,
      errors: ['SUBJECT_INVALID'],
      handler: ({ query, partner }) => queryBalanceAlerts(deps, partner.partnerId, query.organizationId),
    }),
  ];
}
