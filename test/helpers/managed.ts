import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decimal, decimalText, type CardServiceClient, type UserBalance } from '../../sdk/index.ts';
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

/** The user's 2.3 balance object in `asset` as exact decimal texts; fails when the answer has none. */
export async function balanceOf(client: CardServiceClient, user: string, asset: string) {
  const b = (await client.userAssets.balance(user)).find((x: UserBalance) => x.asset === asset);
  assert.ok(b, `balance object for ${asset}`);
  return { free: decimalText(b.free), freeze: decimalText(b.freeze), total: decimalText(b.total) };
}

/** After a file: the ledger audit must be clean, then the service and the database close. */
export async function closeWithCleanLedger(svc: TestService): Promise<void> {
  const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
  assert.deepEqual(report.findings, [], 'the ledger audit is clean after the file');
  await svc.close();
  await closeTestDatabase();
}
