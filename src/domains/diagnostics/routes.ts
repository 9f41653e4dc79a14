import { Type } from 'typebox';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Db } from '../../platform/db/db.ts';
import { parseAmount, toWire, wireNumberText } from '../../platform/money.ts';
import { DecimalEchoAnswer, DecimalEchoBody, PROBE_AMOUNT_RULES } from '../../../sdk/contract/sandbox.ts';
import { pageOf, PagingQuery } from '../../platform/http/schema.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { readOutboxMail } from '../../platform/mail.ts';
import { connectionGuardCounters, rateLimitCounters } from '../../platform/http/guards.ts';
import { insertDecimalProbe } from './store.ts';


/**
 * Probes for partners and operators. The decimal echo is a sandbox-only probe for D4: the amount is parsed losslessly, stored in a NUMERIC column, read back
 * and answered as a JSON number with the same digits. Partners use it to check their JSON stack.
 * The mail outbox read lets operators see what the service sent (D14, D51).
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
      body: DecimalEchoBody,
      data: DecimalEchoAnswer,
      errors: [],
      handler: async ({ body, partner }) => {
        parseAmount('amount', body.amount, PROBE_AMOUNT_RULES);
        // The text as the partner wrote it goes to the unconstrained NUMERIC column, which keeps its scale.
        const text = wireNumberText(body.amount)!;
        const probeId = newId('dp');
        const stored = await insertDecimalProbe(deps.db, { probeId, partnerId: partner.partnerId, amountText: text });
        return { probeId, amount: toWire(stored) };
      },
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/outbox-mail',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Read the mail outbox, newest first (D14, D51); bodies are kept only when no SMTP is configured',
      querystring: Type.Object({ recipient: Type.Optional(Type.String({ maxLength: 128 })), ...PagingQuery }),
      errors: [],
      handler: async ({ query }) => {
        const paging = { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
        const { total, rows } = await readOutboxMail(deps.db, {
          recipient: query.recipient ?? null, limit: paging.pageSize, offset: (paging.page - 1) * paging.pageSize,
        });
        return pageOf(paging, total, rows.map((r) => ({
          mailId: r.mailId, recipient: r.recipient, subject: r.subject, body: r.body, transport: r.transport,
          sentTime: r.sentAt ? r.sentAt.toISOString() : null, error: r.error, createTime: r.createdAt.toISOString(),
        })));
      },
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/connection-guards',
      auth: 'admin', role: 'viewer',
      tag: 'Admin',
      summary: 'What the connection guards and the limits by address refused since this instance started (docs/security.md)',
      errors: [],
      handler: async () => ({ connections: { ...connectionGuardCounters }, rateLimited: { ...rateLimitCounters } }),
    }),
  ];
}
