import { Command, Option } from 'commander';
import type { AdminClient, OperatorRole } from '../../sdk/index.ts';
import { CliFailure } from './admin.ts';

/** Runs calls of the SDK's admin client for this command; a failure is the CLI's one line. */
type Admin = <T>(cmd: Command, calls: (client: AdminClient) => Promise<T>) => Promise<T>;
type Print = (cmd: Command, data: unknown, heading?: string) => void;

const ROLES: OperatorRole[] = ['viewer', 'support', 'risk', 'admin'];

/**
 * Operator accounts and the audit trail on the command line (issue 29), over the admin API like
 * every other admin command: `npm run admin -- operator-create --name alice --role support`.
 */
export function operatorCommands(admin: Command, { admin: run, print }: { admin: Admin; print: Print }): void {
  admin.command('operator-create').description('create a named operator account; prints its password and TOTP secret once')
    .requiredOption('--name <name>', 'login name: lower-case letters, digits, dot, dash, underscore')
    .addOption(new Option('--role <role>', 'viewer (read), support (KYC, card block, event resend), risk (restrictions), admin (everything)')
      .choices(ROLES).makeOptionMandatory())
    .action(async (o: { name: string; role: OperatorRole }, cmd: Command) => {
      print(cmd, await run(cmd, (c) => c.createOperator({ name: o.name, role: o.role })),
        'Operator created. The password and TOTP secret are shown only now: hand them over securely; the operator enrols the otpauth URI in an authenticator app.');
    });

  admin.command('operator-list').description('operator accounts (no credentials)')
    .action(async (_o: unknown, cmd: Command) => print(cmd, await run(cmd, (c) => c.operators())));

  admin.command('operator-update').description("change an operator's role or status, unlock it, or reset its credentials")
    .requiredOption('--operator-id <id>', 'the operator')
    .addOption(new Option('--role <role>', 'new role').choices(ROLES))
    .addOption(new Option('--status <status>', 'ACTIVE or DISABLED').choices(['ACTIVE', 'DISABLED']))
    .option('--unlock', 'lift a lockout after repeated failed logins')
    .option('--reset-credentials', 'new password and TOTP secret (printed once)')
    .action(async (o: { operatorId: string; role?: OperatorRole; status?: 'ACTIVE' | 'DISABLED'; unlock?: boolean; resetCredentials?: boolean }, cmd: Command) => {
      const { operatorId, role, status, unlock, resetCredentials } = o;
      if ([role, status, unlock, resetCredentials].every((v) => v === undefined)) throw new CliFailure('nothing to change: give --role, --status, --unlock or --reset-credentials', 2);
      const changes = Object.fromEntries(Object.entries({ role, status, unlock, resetCredentials }).filter(([, v]) => v !== undefined));
      print(cmd, await run(cmd, (c) => c.updateOperator({ operatorId, ...changes })), 'Operator updated.');
    });

  admin.command('audit-trail').description('the audit trail of administrative actions, newest first')
    .option('--actor <name>', 'only this actor (operator name, or admin-token)')
    .option('--action <action>', 'only this action, e.g. "POST /internal/admin/v1/kyc-decisions" or card.block')
    .option('--target <id>', 'only actions on this id')
    .option('--before <seq>', 'entries before this sequence number (the previous page\'s next)')
    .action(async (o: { actor?: string; action?: string; target?: string; before?: string }, cmd: Command) => {
      const page = await run(cmd, (c) => c.auditTrail({ actor: o.actor, action: o.action, target: o.target, before: o.before }));
      print(cmd, page.entries);
      if (page.next) print(cmd, `more: --before ${page.next}`);
    });

  admin.command('audit-verify').description("verify the audit trail's hash chain; exit 1 when an entry was modified, removed or inserted")
    .action(async (_o: unknown, cmd: Command) => {
      const report = await run(cmd, (c) => c.verifyAuditTrail());
      print(cmd, report, report.ok ? 'The audit trail verifies.' : 'THE AUDIT TRAIL DOES NOT VERIFY.');
      if (!report.ok) throw new CliFailure(`audit trail broken at entry ${report.brokenAt?.seq}: ${report.brokenAt?.reason}`, 1);
    });
}
