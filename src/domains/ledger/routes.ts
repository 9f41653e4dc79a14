import { Type } from 'typebox';
import type { Db } from '../../platform/db/db.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { auditLedger } from './audit.ts';

/** Operator routes of the ledger (D33, D51; bearer ADMIN_TOKEN). */
export function ledgerAdminRoutes(deps: { db: Db }): RouteDef[] {
  return [
    route({
      method: 'GET',
      url: '/internal/admin/v1/ledger/audit',
      auth: 'admin', role: 'viewer',
      tag: 'Admin',
      summary: 'Re-derive every ledger balance from its postings and report differences (D33)',
      querystring: Type.Object({ partnerId: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })) }),
      errors: [],
      handler: ({ query }) => auditLedger(deps.db, { partnerId: query.partnerId }),
    }),
  ];
}
