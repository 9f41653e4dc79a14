/**
 * Metrics and trace spans of the authorization engine (issue 27, docs/observability.md), observed
 * at its seams so the pipeline itself stays as it is: the use cases as the routes call them, and
 * the partner-decision stage as it is plugged in (src/app.ts; decision.ts records what it reports).
 *
 * Labels are closed sets: the source, the outcome, a D47 decline reason, a stand-in reason, a code
 * of the error catalog. No card id, transId, amount or merchant ever becomes a label.
 */
import { ApiError } from '../../platform/errors.ts';
import { counter, histogram } from '../../platform/metrics.ts';
import { inSpan } from '../../platform/tracing.ts';
import type { TransactionView } from './schemas.ts';
import type { PartnerDecisionStage, PartnerExchange } from './decision.ts';
import { forwardings, standIns } from './forwarding-metrics.ts';
import { DECLINE_REASONS } from './service.ts';
import type { Source } from './store.ts';

const SOURCES: Record<Source, string> = { SANDBOX: 'sandbox', NETWORK: 'network' };

const decisions = counter('authorization_decisions_total',
  'Authorizations answered, by source (sandbox, network), outcome (approved, declined, error) and reason (a D47 decline reason, the error code, or none)',
  ['source', 'outcome', 'reason']);
const decisionDuration = histogram('authorization_decision_duration_seconds',
  'Time to answer an authorization, partner decision included, by source', ['source']);
const settlements = counter('authorization_settlement_messages_total',
  'Settlement messages (clearing, reversal, refund) by type, source and result (ok or the error code)', ['type', 'source', 'result']);
const forwardingDuration = histogram('authorization_forwarding_duration_seconds',
  'Time an authorization waited for its partner\'s answer at the auth_url (the exchange and its checks)');

// Every decline reason exists as a series from the start: a rate over a reason that never
// happened is 0, not absent, so the spike alert sees its first occurrence.
for (const source of Object.values(SOURCES)) {
  decisions.inc({ source, outcome: 'approved', reason: 'none' }, 0);
  for (const reason of DECLINE_REASONS) decisions.inc({ source, outcome: 'declined', reason }, 0);
}

/** A label value from a value that should be in a closed set; anything else is OTHER. */
function bounded(value: string | null | undefined, allowed: readonly string[] | RegExp): string {
  if (!value) return 'none';
  const ok = Array.isArray(allowed) ? allowed.includes(value) : (allowed as RegExp).test(value);
  return ok ? value : 'OTHER';
}

const CODE = /^[A-Z][A-Z0-9_]{0,47}$/;

function errorLabel(err: unknown): string {
  return err instanceof ApiError ? bounded(err.code, CODE) : 'INTERNAL';
}

/** `authorize` as the routes call it: one span, one decision counted, its duration. */
export async function observedAuthorize(source: Source, run: () => Promise<TransactionView>): Promise<TransactionView> {
  const label = SOURCES[source];
  const started = performance.now();
  return inSpan('authorization.authorize', async (span) => {
    span.setAttribute('app.source', label);
    let answer: TransactionView;
    try {
      answer = await run();
    } catch (err) {
      decisions.inc({ source: label, outcome: 'error', reason: errorLabel(err) });
      throw err;
    }
    const reason = answer.approved ? 'none' : bounded(answer.declineReason, DECLINE_REASONS);
    decisions.inc({ source: label, outcome: answer.approved ? 'approved' : 'declined', reason });
    decisionDuration.observe({ source: label }, (performance.now() - started) / 1000);
    span.setAttribute('app.trans_id', answer.transId);
    span.setAttribute('app.approved', answer.approved);
    if (!answer.approved) span.setAttribute('app.decline_reason', reason);
    return answer;
  });
}

/** A clearing, reversal or refund as the routes call it: one span, one message counted. */
export async function observedSettlement(type: 'clearing' | 'reversal' | 'refund', source: Source, run: () => Promise<TransactionView>): Promise<TransactionView> {
  return inSpan(`authorization.${type}`, async (span) => {
    span.setAttribute('app.source', SOURCES[source]);
    try {
      const answer = await run();
      settlements.inc({ type, source: SOURCES[source], result: 'ok' });
      return answer;
    } catch (err) {
      settlements.inc({ type, source: SOURCES[source], result: errorLabel(err) });
      throw err;
    }
  });
}

const STAND_IN = /^[A-Z_]{1,32}$/;

/**
 * The partner-decision stage (D34, D37) with its span and metrics: the decision recorded
 * (`decided`, once per forwarded authorization), why the partner gave no valid answer (the
 * exchange's stand-in reason) and how long the authorization waited for the exchange. The HTTP
 * request to the auth_url is a child span of `authorization.partner_decision` and carries its
 * `traceparent`.
 */
export function observedDecisionStage(stage: PartnerDecisionStage): PartnerDecisionStage {
  return {
    forward: (input) => inSpan('authorization.partner_decision', async (span) => {
      const started = performance.now();
      let exchange: PartnerExchange | null;
      try {
        exchange = await stage.forward(input);
      } catch (err) {
        standIns.inc({ stand_in_reason: 'SERVICE_ERROR' });
        throw err;
      }
      span.setAttribute('app.forwarded', exchange !== null);
      if (exchange) {
        forwardingDuration.observe((performance.now() - started) / 1000);
        span.setAttribute('app.forwarding.answered', exchange.answer !== null);
        if (exchange.answer) span.setAttribute('app.forwarding.approved', exchange.answer.approved);
        if (exchange.standInReason) {
          const reason = bounded(exchange.standInReason, STAND_IN);
          standIns.inc({ stand_in_reason: reason });
          span.setAttribute('app.forwarding.stand_in_reason', reason);
        }
      }
      return exchange;
    }),
    decided: (outcome) => {
      forwardings.inc({ outcome: bounded(outcome, STAND_IN) });
      stage.decided?.(outcome);
    },
  };
}
