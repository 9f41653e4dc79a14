import { Type } from 'typebox';
import type { AppContext } from '../../platform/context.ts';
import type { Db } from '../../platform/db/db.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { AUDIT_PAGE_MAX, listAudit, verifyAuditTrail } from './audit.ts';
import { createOperator, listOperators, updateOperator } from './service.ts';

const Role = Type.Union([Type.Literal('viewer'), Type.Literal('support'), Type.Literal('risk'), Type.Literal('admin')]);
const OperatorView = Type.Object({
  operatorId: Type.String(), name: Type.String(), role: Role, status: Type.String(), lockedUntil: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
});
const Credentials = Type.Object({
  password: Type.String({ description: 'Shown only now: hand it to the operator securely' }),
  totpSecret: Type.String({ description: 'Base32 TOTP secret (RFC 6238), shown only now' }),
  totpUri: Type.String({ description: 'otpauth:// URI for an authenticator app' }),
});

/** Operator accounts and the audit trail (issue 29). */
export function operatorRoutes(ctx: AppContext & { db: Db }): RouteDef[] {
  return [
    route({
      method: 'POST', url: '/internal/admin/v1/operators', auth: 'admin', role: 'admin', tag: 'Admin',
      summary: 'Create a named operator account; its password and TOTP secret are answered once',
      body: Type.Object({ name: Type.String({ minLength: 2, maxLength: 40 }), role: Role }),
      data: Type.Object({ ...OperatorView.properties, credentials: Credentials }),
      errors: [],
      handler: ({ body }) => createOperator(ctx, body),
    }),
    route({
      method: 'GET', url: '/internal/admin/v1/operators', auth: 'admin', role: 'admin', tag: 'Admin',
      summary: 'Operator accounts (no credentials)',
      data: Type.Array(OperatorView),
      errors: [],
      handler: () => listOperators(ctx),
    }),
    route({
      method: 'POST', url: '/internal/admin/v1/operators/update', auth: 'admin', role: 'admin', tag: 'Admin',
      summary: "Change an operator's role or status, unlock it, or reset its credentials (answered once)",
      body: Type.Object({
        operatorId: Type.String({ minLength: 1, maxLength: 20 }),
        role: Type.Optional(Role),
        status: Type.Optional(Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')])),
        unlock: Type.Optional(Type.Boolean()),
        resetCredentials: Type.Optional(Type.Boolean()),
      }),
      data: Type.Object({ ...OperatorView.properties, credentials: Type.Optional(Credentials) }),
      errors: [],
      handler: ({ body }) => updateOperator(ctx, body),
    }),
    route({
      method: 'GET', url: '/internal/admin/v1/audit-trail', auth: 'admin', role: 'viewer', tag: 'Admin',
      summary: 'The audit trail of administrative actions, newest first (page on with before = next)',
      querystring: Type.Object({
        actor: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        action: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        target: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        before: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,17}$' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX })),
      }),
      errors: [],
      handler: ({ query }) => listAudit(ctx.db, { actor: query.actor, action: query.action, target: query.target, beforeSeq: query.before }, query.limit),
    }),
    route({
      method: 'GET', url: '/internal/admin/v1/audit-trail/verify', auth: 'admin', role: 'admin', tag: 'Admin',
      summary: "Verify the audit trail's hash chain from the first entry to the head",
      data: Type.Object({
        ok: Type.Boolean(), entries: Type.Integer(), headSeq: Type.String(),
        brokenAt: Type.Union([Type.Object({ seq: Type.String(), reason: Type.String() }), Type.Null()]),
      }),
      errors: [],
      handler: () => verifyAuditTrail(ctx.db, ctx.config.masterKey),
    }),
  ];
}
