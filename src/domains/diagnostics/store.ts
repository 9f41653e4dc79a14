import type { Queryable } from '../../platform/db/db.ts';

/** SQL of the decimal probe (D4): the text goes to an unconstrained NUMERIC column and comes back as text. */
export async function insertDecimalProbe(q: Queryable, p: { probeId: string; partnerId: string; amountText: string }): Promise<string> {
  const [row] = await q.query<{ amount: string }>(
    'INSERT INTO decimal_probes (probe_id, partner_id, amount) VALUES ($1, $2, $3::numeric) RETURNING amount::text AS amount',
    [p.probeId, p.partnerId, p.amountText],
  );
  return row.amount;
}
