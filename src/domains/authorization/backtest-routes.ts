import { route, type RouteDef } from '../../platform/http/router.ts';
import { BacktestBody, BacktestKeyBody, BacktestOut } from '../../../sdk/contract/velocity.ts';
import { queryBacktest, startBacktest, type BacktestDeps } from './backtest.ts';

const BASE = '/open-api-corp/velocity/v1';
const TAG = 'Velocity rules';

/**
 * Issue 31 section 3: backtests of a draft velocity rule, beside the velocity routes (the partner's
 * view), served by the authorization engine (it owns the recorded authorizations replayed).
 */
export function backtestRoutes(deps: BacktestDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: `${BASE}/backtest`,
      auth: 'partner',
      tag: TAG,
      summary: 'Backtest a draft rule over past authorizations (nothing is created or changed)',
      description: 'Replays your recorded authorizations of the given cards and employees over a past window (at most 90 days, '
        + 'endTime not in the future) in time order, with the usage the draft would have accumulated, and reports what the draft '
        + 'would have declined. `rule` is a create-rule body, validated as create-rule validates it; `bindings` are checked as '
        + 'bind-rule checks them. mode COMBINED (default) judges the draft with the rules bound at each authorization\'s time, ALONE '
        + 'the draft only. Always runs as a job: the answer is PENDING; poll backtest-detail for progress and the result. '
        + 'At most BACKTEST_MAX_PENDING_PER_PARTNER (default 5) of your backtests may be PENDING or RUNNING: one more is refused '
        + 'with HTTP 429 SYS_RATE_LIMITED and nothing is created; start it again once one has finished.',
      body: BacktestBody,
      data: BacktestOut,
      errors: ['ORGANIZATION_INVALID', 'SUBJECT_TYPE_NOT_ALLOWED', 'SUBJECT_INVALID', 'VELOCITY_RULE_CURRENCY_MISMATCH'],
      example: {
        rule: {
          organizationId: 'orgmwxdk8zq49621f23a', ruleRef: 'draft-coffee', ruleName: 'Coffee only',
          purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: 50, daily: 200 }], countLimits: { daily: 10 } },
          mccControl: { filterType: 'WHITELIST', values: ['5814'] },
        },
        bindings: [{ subjectType: 'CARD', subjectIds: ['cdmwxdk8zr3fa53eaf45'] }],
        startTime: '2026-09-01T00:00:00.000Z',
        endTime: '2026-11-26T00:00:00.000Z',
        mode: 'COMBINED',
      },
      handler: ({ body, partner }) => startBacktest(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: `${BASE}/backtest-detail`,
      auth: 'partner',
      tag: TAG,
      summary: 'Progress and result of a backtest',
      description: 'While RUNNING, `result` holds the figures so far; they are final once `status` is COMPLETED.',
      body: BacktestKeyBody,
      data: BacktestOut,
      errors: ['VELOCITY_BACKTEST_NOT_FOUND'],
      example: { backtestId: 'btmwxdk8zq49621f23ab' },
      handler: ({ body, partner }) => queryBacktest(deps, partner.partnerId, body),
    }),
  ];
}
