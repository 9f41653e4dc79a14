import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decimal, type CardServiceClient } from '../../sdk/index.ts';
import { closeTestDatabase, type TestService } from './service.ts';

/** Shared pieces of the managed-balance test files (issue 11). */

/** A fresh externalUserId. */
export const newUserId = (): string => `user-${randomBytes(4).toString('hex')}`;
/** A fresh externalTranId. */
export const newTranId = (): string => `tx-${randomBytes(6).toString('hex')}`;

/** Credits `amount` of `asset` to the user with a fresh externalTranId. */
export function creditUser(client: CardServiceClient, user: string, asset: string, amount: string) {
  return client.userAssets.credit({ externalTranId: newTranId(), asset, amount: decimal(amount), externalUserId: user });
}

/** After a file: the ledger audit must be clean, then the service and the database close. */
export async function closeWithCleanLedger(svc: TestService): Promise<void> {
  const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
  assert.deepEqual(report.findings, [], 'the ledger audit is clean after the file');
  await svc.close();
  await closeTestDatabase();
}
