import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/db.ts';
import { ApiError } from '../../platform/errors.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import { partnerExists } from '../partners/index.ts';
import type { AuthUrlForwarder } from './forwarding.ts';
import { listForwardings, upsertForwardingSettings } from './forwarding-store.ts';

/** Operators: a partner's answer deadline and stand-in decision (D37). */
export async function setForwardingSettings(
  deps: { db: Db; clock: Clock; forwarder: AuthUrlForwarder },
  input: { partnerId: string; deadlineMs: number; standIn: 'APPROVE' | 'DECLINE' },
): Promise<null> {
  if (!(await partnerExists(deps.db, input.partnerId))) throw new ApiError('PARTNER_INVALID');
  await upsertForwardingSettings(deps.db, input, new Date(deps.clock.now()));
  deps.forwarder.forget(input.partnerId);
  return null;
}

export async function listForwardingsPage(deps: { db: Db }, query: { partnerId?: string; transId?: string }, paging: Paging) {
  const { total, rows } = await listForwardings(deps.db, { partnerId: query.partnerId ?? null, transId: query.transId ?? null },
    paging.pageSize, (paging.page - 1) * paging.pageSize);
  return pageOf(paging, total, rows.map((r) => ({ ...r, createTime: r.createdAt.toISOString(), createdAt: undefined })));
}
