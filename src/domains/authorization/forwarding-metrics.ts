/**
 * The forwarding counters (issue 27, docs/observability.md), apart from observability.ts so that
 * decision.ts can count the decisions it records outside the partner-decision stage (the stand-in
 * of an overdue decision, recorded by a later copy of the request or by the recovery job) without
 * importing service.ts through observability.ts (service.ts and decision.ts import each other).
 */
import { counter } from '../../platform/metrics.ts';
import { STAND_IN_REASONS, type ForwardingOutcome } from './forwarding-store.ts';

export const forwardings = counter('authorization_forwardings_total',
  'Decisions recorded for authorizations forwarded to a partner\'s auth_url, by outcome (APPROVED, DECLINED, STAND_IN_APPROVED, STAND_IN_DECLINED)',
  ['outcome']);
export const standIns = counter('authorization_forwarding_stand_ins_total',
  'Forwardings without a valid answer from the partner, by stand-in reason (TIMEOUT, TRANSPORT_ERROR, HTTP_STATUS, SIGNATURE_INVALID, SERVICE_ERROR, ...)',
  ['stand_in_reason']);

for (const outcome of ['APPROVED', 'DECLINED', 'STAND_IN_APPROVED', 'STAND_IN_DECLINED']) forwardings.inc({ outcome }, 0);
for (const reason of STAND_IN_REASONS) standIns.inc({ stand_in_reason: reason }, 0);

/**
 * An overdue decision's stand-in recorded (reason SERVICE_ERROR: no decision was recorded by its
 * due time): counted like the stage's decisions, else a database failing during decisions left
 * every stand-in it caused out of authorization_forwardings_total and the AuthUrlStandIns alert
 * (review rvG).
 */
export function countOverdueStandIn(outcome: ForwardingOutcome | null): void {
  if (outcome === null) return;
  forwardings.inc({ outcome });
  standIns.inc({ stand_in_reason: 'SERVICE_ERROR' });
}
