import { Command, Option } from 'commander';
import { CliFailure } from './admin-cli.ts';

type Call = (cmd: Command, method: 'GET' | 'POST', route: string, body?: unknown) => Promise<unknown>;
type Print = (cmd: Command, data: unknown, heading?: string) => void;

const ROLES = ['viewer', 'support', 'risk', 'admin'];

/**
 * Operator accounts and the audit trail on the command line (issue 29), over the admin API like
 * every other admin command: `npm run admin -- operator-create --name alice --role support`.
 */
export function operatorCommands(admin: Command, { call, print }: { call: Call; print: Print }): void {
  admin.command('operator-create').description('create a named operator account; prints its password and TOTP secret once')
    .requiredOption('--name <name>', 'login name: lower-case letters, digits, dot, dash, underscore')
    .addOption(new Option('--role <role>', 'viewer (read), support (KYC, card block, event resend), risk (restrictions), admin (everything)')
      .choices(ROLES).makeOptionMandatory())
    .action(async (o: { name: string; role: string }, cmd: Command) => {
      print(cmd, await call(cmd, 'POST', '/internal/admin/v1/operators', { name: o.name, role: o.role }),
        'Operator created. The password and TOTP secret are shown only now: hand them over securely; the operator enrols the otpauth URI in an authenticator app.');
    });

  admin.command('operator-list').description('operator accounts (no credentials)')
    .action(async (_o: unknown, cmd: Command) => print(cmd, await call(cmd, 'GET', '/internal/admin/v1/operators')));

  admin.command('operator-update').description("change an operator's role or status, unlock it, or reset its credentials")
    .requiredOption('--operator-id <id>', 'the operator')
    .addOption(new Option('--role <role>', 'new role').choices(ROLES))
    .addOption(new Option('--status <status>', 'ACTIVE or DISABLED').choices(['ACTIVE', 'DISABLED']))
    .option('--unlock', 'lift a lockout after repeated failed logins')
    .option('--reset-credentials', 'new password and TOTP secret (printed once)')
    .action(async (o: { operatorId: string; role?: string; status?: string; unlock?: boolean; resetCredentials?: boolean }, cmd: Command) => {
      const body = { operatorId: o.operatorId, role: o.role, status: o.status, unlock: o.unlock, resetCredentials: o.resetCredentials };
      if (Object.values(body).filter((v) => v !== undefined).length === 1) throw new CliFailure('nothing to change: give --role, --status, --unlock or --reset-credentials', 2);
      print(cmd, await call(cmd, 'POST', '/internal/admin/v1/operators/update', JSON.parse(JSON.stringify(body))), 'Operator updated.');
    });

  admin.command('audit-trail').description('the audit trail of administrative actions, newest first')
    .option('--actor <name>', 'only this actor (operator name, or admin-token)')
    .option('--action <action>', 'only this action, e.g. "POST /internal/admin/v1/kyc-decisions" or card.block')
    .option('--target <id>', 'only actions on this id')
    .option('--before <seq>', 'entries before this sequence number (the previous page\'s next)')
    .action(async (o: { actor?: string; action?: string; target?: string; before?: string }, cmd: Command) => {
      const query = new URLSearchParams(Object.entries(o).filter(([, v]) => v !== undefined) as [string, string][]);
      const page = await call(cmd, 'GET', `/internal/admin/v1/audit-trail${query.size ? `?${query}` : ''}`) as { entries: unknown[]; next: string | null };
      print(cmd, page.entries);
      if (page.next) print(cmd, `more: --before ${page.next}`);
    });

  admin.command('audit-verify').description("verify the audit trail's hash chain; exit 1 when an entry was modified, removed or inserted")
    .action(async (_o: unknown, cmd: Command) => {
      const report = await call(cmd, 'GET', '/internal/admin/v1/audit-trail/verify') as { ok: boolean; brokenAt: { seq: string; reason: string } | null };
      print(cmd, report, report.ok ? 'The audit trail verifies.' : 'THE AUDIT TRAIL DOES NOT VERIFY.');
      if (!report.ok) throw new CliFailure(`audit trail broken at entry ${report.brokenAt?.seq}: ${report.brokenAt?.reason}`, 1);
    });
}
