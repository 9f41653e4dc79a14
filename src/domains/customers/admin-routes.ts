import { Type } from 'typebox';
import type { AppContext } from '../../platform/context.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { CustomerId, Remark } from '../organizations/index.ts';
import { decideKyc } from './kyc.ts';

export type CustomerAdminDeps = Pick<AppContext, 'db' | 'clock'>;

/** Operator routes of D51 for employees (bearer ADMIN_TOKEN). */
export function customerAdminRoutes(deps: CustomerAdminDeps): RouteDef[] {
  const now = () => new Date(deps.clock.now());
  return [
    route({
      method: 'POST',
      url: '/internal/admin/v1/kyc-decisions',
      auth: 'admin', role: 'support',
      tag: 'Admin',
      summary: "Decide an employee's KYC review in flight (D17, D51)",
      body: Type.Object({
        customerId: CustomerId,
        decision: Type.Union([Type.Literal('APPROVED'), Type.Literal('REJECTED')]),
        reason: Type.Optional(Remark),
      }),
      data: Type.Object({ customerId: Type.String(), kycStatus: Type.String(), reason: Type.Union([Type.String(), Type.Null()]) }),
      errors: ['CUSTOMER_INVALID', 'STATUS_CONFLICT'],
      handler: ({ body }) => deps.db.tx((q) => decideKyc(q, {
        customerId: body.customerId, partnerId: null, decision: body.decision, reason: body.reason ?? null, decidedBy: 'OPERATOR', at: now(),
      })),
    }),
  ];
}
