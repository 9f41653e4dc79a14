import { Type } from 'typebox';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Db } from '../../platform/db/db.ts';
import { ASSET_MAX_SCALE, parseAmount, toWire, wireNumberText } from '../../platform/money.ts';
import { Money } from '../../platform/http/schema.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { insertDecimalProbe } from './store.ts';

const AMOUNT_RULES = { maxScale: ASSET_MAX_SCALE, sign: 'any' } as const;

/**
 * Sandbox-only probe for D4: the amount is parsed losslessly, stored in a NUMERIC column, read back
 * and answered as a JSON number with the same digits. Partners use it to check their JSON stack.
 */
export function diagnosticsRoutes(deps: { db: Db }): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: '/open-api/sandbox/v1/decimal-echo',
      auth: 'partner',
      tag: 'Sandbox',
      summary: 'Store an exact decimal and read it back (D4)',
      sandboxOnly: true,
      body: Type.Object({ amount: Money(AMOUNT_RULES) }),
      data: Type.Object({ probeId: Type.String(), amount: Money(AMOUNT_RULES) }),
      errors: [],
      handler: async ({ body, partner }) => {
        parseAmount('amount', body.amount, AMOUNT_RULES);
        // The text as the partner wrote it goes to the unconstrained NUMERIC column, which keeps its scale.
        const text = wireNumberText(body.amount)!;
        const probeId = newId('dp');
        const stored = await insertDecimalProbe(deps.db, { probeId, partnerId: partner.partnerId, amountText: text });
        return { probeId, amount: toWire(stored) };
      },
    }),
  ];
}
