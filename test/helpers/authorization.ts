import assert from 'node:assert/strict';
import { decimal, decimalText, SignedHttpClient, type Card, type CardTransaction } from '../../sdk/index.ts';
import { cardWorld, issueCard, ref, type CardWorld } from './cards.ts';
import type { TestService } from './service.ts';

/** Fixtures of the authorization tests: everything through the public API. */

export interface SpendWorld extends CardWorld {
  card: Card;
}

/** A world with an issued card funded with `funds` USD (the pool for SHARED, the card's balance for DEDICATED). */
export async function fundedCard(
  svc: TestService,
  options: { dedicated?: boolean; company?: boolean; funds?: string; ruleIds?: string[]; world?: CardWorld } = {},
): Promise<SpendWorld> {
  const world = options.world ?? await cardWorld(svc);
  const card = await issueCard(svc, world, {
    profile: options.dedicated ? 'sbx-visa-dedicated' : 'sbx-visa-shared', company: options.company, ruleIds: options.ruleIds,
  });
  const funds = options.funds ?? '100.00';
  if (funds !== '0') {
    await world.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: world.org.organizationId, currency: 'USD', amount: decimal(funds) });
    if (options.dedicated) {
      await world.client.cards.transfer({
        organizationId: world.org.organizationId, cardId: card.cardId, direction: 'POOL_TO_CARD', currency: 'USD', amount: decimal(funds),
        externalTranId: ref('fund'),
      });
    }
  }
  return { ...world, card };
}

export const purchase = (cardId: string, amount: string, overrides: Record<string, unknown> = {}) => ({
  cardId, amount: decimal(amount), currency: 'USD', merchantName: 'Blue Bottle Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS' as const,
  ...overrides,
});

/** Available / pending / total of the card's funds (pool or dedicated balance) in USD, as text. */
export async function fundsOf(w: SpendWorld, currency = 'USD'): Promise<{ available: string; pending: string; total: string }> {
  const balance = await w.client.funding.balance(w.org.organizationId);
  const line = w.card.balanceMode === 'DEDICATED'
    ? balance.cards.find((c) => c.cardId === w.card.cardId && c.currency === currency)
    : balance.pools.find((p) => p.currency === currency);
  if (!line) return { available: '0.00', pending: '0.00', total: '0.00' };
  return { available: decimalText(line.available), pending: decimalText(line.pending), total: decimalText(line.total) };
}

/** Used amount and count of the card's daily USD purchase quota. */
export async function usageOf(w: SpendWorld, subject: { subjectType: 'CARD' | 'CUSTOMER'; subjectId: string } = { subjectType: 'CARD', subjectId: w.card.cardId }, group: 'purchase' | 'cashAdvance' = 'purchase') {
  const quota = await w.client.velocity.queryQuota({ organizationId: w.org.organizationId, ...subject, currency: 'USD' });
  const g = quota[group];
  const usd = g.amountLimits.find((a) => a.currency === 'USD');
  return { amount: usd ? decimalText(usd.daily!.usedAmount) : '0', count: g.countLimits.daily.usedCount };
}

export function text(value: unknown): string {
  return decimalText(value);
}

/** Declined with this reason, holding nothing. */
export function assertDeclined(t: CardTransaction, reason: string): void {
  assert.equal(t.approved, false, `expected a decline ${reason}`);
  assert.equal(t.declineReason, reason);
  assert.equal(t.status, 'DECLINED');
  assert.equal(decimalText(t.holdAmount), '0');
}

/** A signed client of the card network ingress with a fresh operator-issued network key. */
export async function networkClient(svc: TestService, ipAllowlist?: string[]): Promise<SignedHttpClient> {
  const key = await svc.admin.createNetworkKey({ name: 'test network', ...(ipAllowlist ? { ipAllowlist } : {}) });
  return new SignedHttpClient({ baseUrl: svc.baseUrl, apiKey: key.apiKey, secretKey: key.secretKey, now: svc.clock.now });
}
