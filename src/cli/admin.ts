import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import cliProgress from 'cli-progress';
import { parse as parseLossless, stringify as stringifyLossless, isLosslessNumber } from 'lossless-json';
import { AdminClient, CardServiceError, type CreatePartnerInput, type ReencryptProgress, type UpdatePartnerInput } from '../../sdk/index.ts';
import { operatorCommands } from './operators.ts';

/**
 * The operator command line (`npm run admin -- <command>`, D13): one command per admin API route
 * that operators use by hand, on commander. Every documented option is sent; unknown options and
 * malformed values are usage errors (exit 2); the admin API refuses unknown body fields
 * (DAPI_PARAM_INVALID, exit 2); any other failure is one line on stderr and exit 1. Output is
 * human-readable; `--json` prints the answer's `data` as JSON for scripts.
 */

/** A failure the CLI reports as one line, with its exit code (2 usage, 1 anything else). */
export class CliFailure extends Error {
  constructor(message: string, readonly exitCode: 1 | 2) {
    super(message);
  }
}

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** Where the progress bar goes (a TTY shows it; elsewhere it stays silent). */
  progressStream: NodeJS.WritableStream;
}

interface AdminGlobals {
  url: string;
  json?: boolean;
}

type Json = Record<string, unknown>;

const ENVELOPE_USAGE_CODES = new Set(['DAPI_PARAM_INVALID', 'SYS_ILLEGAL_PARAM']);

function adminToken(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  const file = path.join(path.resolve(env.DATA_DIR || './data'), 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  throw new CliFailure(`ADMIN_TOKEN is not set and no generated token was found in the data folder (${file}); start the service once or set ADMIN_TOKEN`, 2);
}

/** An admin client of the SDK for this command's --url and token; the user agent labels the audit trail's entries with channel cli (issue 29). */
function adminClient(io: CliIo, globals: AdminGlobals): AdminClient {
  return new AdminClient(globals.url, adminToken(io.env), { userAgent: 'cardsvc-admin-cli', timeoutMs: CALL_TIMEOUT_MS });
}

const CALL_TIMEOUT_MS = 60_000;

/** A failed admin call as the CLI's one line: unreachable, no answer in time, not an envelope, or the envelope's code. */
export function cliFailureOf(err: unknown, url: string): unknown {
  if (!(err instanceof CardServiceError)) return err;
  if (err.code === 'NETWORK_ERROR') {
    const c = ((err.cause as { cause?: unknown } | undefined)?.cause ?? undefined) as { code?: string; message?: string; errors?: { code?: string }[] } | undefined;
    const cause = c?.code ?? c?.errors?.[0]?.code ?? c?.message ?? 'no answer';
    return new CliFailure(`cannot reach the service at ${url} (${cause}); is it running? Set --url or ADMIN_URL`, 1);
  }
  if (err.code === 'TIMEOUT') return new CliFailure(`no answer from the service at ${url} within ${CALL_TIMEOUT_MS / 1000} s; try again, or check the service's log`, 1);
  if (err.code === 'INVALID_RESPONSE') return new CliFailure(`unexpected answer from the service: ${err.message}`, 1);
  // serviceMessage: the SDK's `message` already reads `CODE: message` (it printed the code twice).
  return new CliFailure(`${err.code}: ${err.serviceMessage || `HTTP ${err.httpStatus}`}`, ENVELOPE_USAGE_CODES.has(err.code) ? 2 : 1);
}

// ---- output -----------------------------------------------------------------------------------

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (isLosslessNumber(value)) return String(value);
  if (typeof value === 'object') return stringifyLossless(value) ?? '';
  return String(value);
}

function table(rows: Json[]): string {
  if (rows.length === 0) return '(none)';
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((c) => rows.some((r) => typeof r[c] !== 'object' || r[c] === null)).slice(0, 8);
  const widths = columns.map((c) => Math.min(40, Math.max(c.length, ...rows.map((r) => cell(r[c]).length))));
  const line = (values: string[]) => values.map((v, i) => (v.length > widths[i] ? `${v.slice(0, widths[i] - 1)}~` : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

/** Human-readable rendering of an answer's data: key/value lines, tables for lists and pages. */
export function humanize(data: unknown): string {
  if (data === null || data === undefined) return 'done';
  if (Array.isArray(data)) return data.every((x) => x && typeof x === 'object') ? table(data as Json[]) : data.map(cell).join('\n');
  if (typeof data !== 'object' || isLosslessNumber(data)) return cell(data);
  const obj = data as Json;
  if (Array.isArray(obj.result) && 'total' in obj) {
    return `${table(obj.result as Json[])}\npage ${cell(obj.page)}, ${(obj.result as unknown[]).length} shown of ${cell(obj.total)}`;
  }
  const width = Math.max(...Object.keys(obj).map((k) => k.length));
  return Object.entries(obj).map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n');
}

/** The outbox as mails, each whole (a table would cut the retrieval link in the body). */
export function humanizeMail(page: unknown): string {
  const { result = [], total = 0 } = (page ?? {}) as { result?: Json[]; total?: unknown };
  if (result.length === 0) return '(no mail)';
  const blocks = result.map((m) => [
    `mail      ${cell(m.mailId)}  ${cell(m.createTime)}  ${cell(m.transport)}${m.error ? `  error: ${cell(m.error)}` : ''}`,
    `to        ${cell(m.recipient)}`,
    `subject   ${cell(m.subject)}`,
    '',
    m.body === null || m.body === undefined ? '(body not kept: sent over SMTP)' : String(m.body),
  ].join('\n'));
  return `${blocks.join(`\n${'-'.repeat(72)}\n`)}\n\n${result.length} shown of ${cell(total)}`;
}

/** What a partner-update changed: one `field: before -> after` line per changed setting. */
export function partnerChanges(before: Json, after: Json): string[] {
  const lines: string[] = [];
  const walk = (b: unknown, a: unknown, name: string) => {
    if (a && typeof a === 'object' && !Array.isArray(a) && !isLosslessNumber(a) && b && typeof b === 'object' && !Array.isArray(b)) {
      for (const key of new Set([...Object.keys(b as Json), ...Object.keys(a as Json)])) walk((b as Json)[key], (a as Json)[key], `${name}.${key}`);
      return;
    }
    if (cell(b) !== cell(a)) lines.push(`${name.slice(1)}: ${cell(b)} -> ${cell(a)}`);
  };
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (key === 'modifyTime' || key === 'updateTime') continue;
    walk(before[key], after[key], `.${key}`);
  }
  return lines;
}

function print(io: CliIo, globals: AdminGlobals, data: unknown, heading?: string): void {
  if (globals.json) {
    io.out(stringifyLossless(data, null, 2) ?? 'null');
    return;
  }
  if (heading) io.out(heading);
  io.out(humanize(data));
}

// ---- option parsing -----------------------------------------------------------------------------

/** --url / ADMIN_URL: a typo is a usage error, not "cannot reach the service ... is it running?". */
function baseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('not a URL; give the service address, e.g. http://127.0.0.1:8080');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('must be an http:// or https:// URL, e.g. http://127.0.0.1:8080');
  return value;
}

function jsonObject(value: string): Json {
  let parsed: unknown;
  try {
    parsed = parseLossless(value);
  } catch (err) {
    throw new InvalidArgumentError(`not valid JSON (${(err as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError('must be a JSON object');
  return parsed as Json;
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

/** "none" clears a setting (sent as null). */
const orNone = (value: string): string | null => (value === 'none' ? null : value);
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',').map((v) => v.trim()).filter(Boolean)];

interface PartnerOptions {
  name?: string;
  pci?: boolean;
  webhookUrl?: string;
  authUrl?: string;
  externalPublicKey?: string;
  apiIp?: string[];
  webhookIp?: string[];
  authIp?: string[];
  retrievalIp?: string[];
  secureCardIvMode?: string;
  status?: string;
  body?: Json;
}

function partnerOptions(cmd: Command, forUpdate: boolean): Command {
  cmd
    .option('--pci', 'on the PCI allowlist: may read full card data (retrieve-secure-card)')
    .option('--no-pci', 'not on the PCI allowlist')
    .option('--webhook-url <url>', 'where events are POSTed ("none" clears it)')
    .option('--auth-url <url>', 'where authorizations are forwarded ("none" clears it)')
    .option('--external-public-key <base64>', "partner's RSA-2048 public key, Base64 SPKI (\"none\" clears it)")
    .option('--api-ip <ip>', 'API-call whitelist entry (IP or CIDR); repeat or comma-separate', collect)
    .option('--webhook-ip <ip>', 'webhook whitelist entry; repeatable', collect)
    .option('--auth-ip <ip>', 'authorization-forwarding whitelist entry; repeatable', collect)
    .option('--retrieval-ip <ip>', 'credential-retrieval whitelist entry; repeatable', collect)
    .addOption(new Option('--secure-card-iv-mode <mode>', 'IVs of retrieve-secure-card').choices(['SHARED', 'PER_FIELD']))
    .option('--body <json>', 'further fields of the admin API body, as a JSON object (unknown fields are refused)', jsonObject);
  if (forUpdate) {
    cmd.option('--name <name>', 'display name');
    cmd.addOption(new Option('--status <status>', 'ACTIVE, or DISABLED (refuses its calls and webhooks)').choices(['ACTIVE', 'DISABLED']));
  }
  return cmd;
}

/** The admin API body a partner-create or partner-update sends: --body first, explicit options over it. */
export function partnerBody(o: PartnerOptions): Json {
  const body: Json = { ...(o.body ?? {}) };
  if (o.name !== undefined) body.name = o.name;
  if (o.pci !== undefined) body.pciCertified = o.pci;
  if (o.webhookUrl !== undefined) body.webhookUrl = orNone(o.webhookUrl);
  if (o.authUrl !== undefined) body.authUrl = orNone(o.authUrl);
  if (o.externalPublicKey !== undefined) body.externalPublicKey = orNone(o.externalPublicKey);
  if (o.secureCardIvMode !== undefined) body.secureCardIvMode = o.secureCardIvMode;
  if (o.status !== undefined) body.status = o.status;
  const lists = { api: o.apiIp, webhook: o.webhookIp, auth: o.authIp, retrieval: o.retrievalIp };
  if (Object.values(lists).some((l) => l !== undefined)) {
    const whitelist: Json = { ...((body.ipWhitelist as Json | undefined) ?? {}) };
    for (const [kind, list] of Object.entries(lists)) if (list !== undefined) whitelist[kind] = list;
    body.ipWhitelist = whitelist;
  }
  return body;
}

/** A `call` route: a path under /internal/admin/v1/ ("partners", "/partners") or the full /internal/admin/... path. */
export function adminRoute(route: string): string {
  const trimmed = route.trim();
  const full = /^\/?internal\/admin\//.test(trimmed) ? `/${trimmed.replace(/^\//, '')}` : `/internal/admin/v1/${trimmed.replace(/^\/+/, '')}`;
  const pathPart = full.split('?')[0];
  if (pathPart.split('/').some((segment) => segment === '..' || segment === '.') || /[\s#]/.test(pathPart)) {
    throw new CliFailure(`not an admin route: ${route}`, 2);
  }
  return full;
}

/** Help marks the options a command cannot run without. */
const HELP_CONFIGURATION = {
  optionDescription: (option: Option) => {
    const extras = [
      ...(option.argChoices ? [`choices: ${option.argChoices.join(', ')}`] : []),
      ...(option.defaultValue !== undefined && !option.negate && option.defaultValue !== false ? [`default: ${JSON.stringify(option.defaultValue)}`] : []),
      ...(option.envVar ? [`env: ${option.envVar}`] : []),
    ];
    const text = `${option.mandatory ? '(required) ' : ''}${option.description}`;
    return extras.length ? `${text} (${extras.join(', ')})` : text;
  },
};

// ---- the commands ---------------------------------------------------------------------------------

export function adminCommand(io: CliIo): Command {
  const admin = new Command('admin')
    .description('operator commands over the admin API; token from ADMIN_TOKEN or DATA_DIR/admin-token')
    .addOption(new Option('--url <url>', 'admin API base URL').env('ADMIN_URL').default(`http://127.0.0.1:${io.env.PORT || 8080}`).argParser(baseUrl))
    .option('--json', 'print the answer as JSON (for scripts) instead of text')
    .configureHelp(HELP_CONFIGURATION);
  const globals = (cmd: Command) => cmd.optsWithGlobals() as AdminGlobals;
  /** Runs calls of the SDK's admin client; a failure becomes the CLI's one line. */
  const admin$ = async <T>(cmd: Command, calls: (client: AdminClient) => Promise<T>): Promise<T> => {
    const g = globals(cmd);
    const client = adminClient(io, g);
    try {
      return await calls(client);
    } catch (err) {
      throw cliFailureOf(err, g.url);
    }
  };

  partnerOptions(admin.command('partner-create').description('create a partner; sandbox prints its apiKey and secretKey once'), false)
    .requiredOption('--name <name>', 'display name')
    .action(async (o: PartnerOptions, cmd: Command) => {
      const created = await admin$(cmd, (c) => c.createPartner(partnerBody(o) as CreatePartnerInput));
      print(io, globals(cmd), created, 'Partner created. The secretKey is shown only now: hand it over securely.');
    });

  partnerOptions(admin.command('partner-update').description('change partner settings; only the options given change'), true)
    .requiredOption('--partner-id <id>', 'the partner')
    .action(async (o: PartnerOptions & { partnerId: string }, cmd: Command) => {
      const changes = partnerBody(o);
      if (Object.keys(changes).length === 0) throw new CliFailure('nothing to change: give at least one setting option (see partner-update --help)', 2);
      const [before, view] = await admin$(cmd, async (c) => {
        const current = await c.partner(o.partnerId);
        return [current, await c.updatePartner(o.partnerId, changes as UpdatePartnerInput)] as const;
      });
      if (globals(cmd).json) return print(io, globals(cmd), view);
      const changed = partnerChanges(before as Json, view as Json);
      io.out(changed.length ? `Partner updated. Changed:\n${changed.map((l) => `  ${l}`).join('\n')}\n` : 'Partner updated: nothing changed (the settings were already so).\n');
      io.out(humanize(view));
    });

  admin.command('partner-list').description('list partners, newest first')
    .option('--page <n>', 'page, from 1', positiveInt)
    .option('--page-size <n>', 'page size, at most 100', positiveInt)
    .action(async (o: { page?: number; pageSize?: number }, cmd: Command) => {
      print(io, globals(cmd), await admin$(cmd, (c) => c.listPartners({ page: o.page, pageSize: o.pageSize })));
    });

  admin.command('partner-show').description('show one partner')
    .requiredOption('--partner-id <id>', 'the partner')
    .action(async (o: { partnerId: string }, cmd: Command) => {
      print(io, globals(cmd), await admin$(cmd, (c) => c.partner(o.partnerId)));
    });

  admin.command('credential-link').description('mail a one-time credential retrieval link')
    .requiredOption('--partner-id <id>', 'the partner')
    .requiredOption('--email <address>', 'secure mailbox of the partner')
    .requiredOption('--retrieval-ip <ip>', 'the only address the link works from')
    .action(async (o: { partnerId: string; email: string; retrievalIp: string }, cmd: Command) => {
      print(io, globals(cmd), await admin$(cmd, (c) => c.createCredentialLink({ partnerId: o.partnerId, email: o.email, retrievalIp: o.retrievalIp })), 'Link mailed.');
    });

  admin.command('kyc-decision').description("decide an employee's pending KYC review")
    .requiredOption('--customer-id <id>', 'the employee')
    .addOption(new Option('--decision <decision>', 'the outcome').choices(['APPROVED', 'REJECTED']).makeOptionMandatory())
    .option('--reason <text>', 'reason (shown to the partner)')
    .action(async (o: { customerId: string; decision: 'APPROVED' | 'REJECTED'; reason?: string }, cmd: Command) => {
      print(io, globals(cmd), await admin$(cmd, (c) => c.decideKyc({
        customerId: o.customerId, decision: o.decision, ...(o.reason ? { reason: o.reason } : {}),
      })));
    });

  admin.command('outbox-mail').description('mail the service wrote to its outbox (sandbox without SMTP), newest first, each in full')
    .option('--recipient <address>', 'only mail to this address')
    .option('--page <n>', 'page, from 1', positiveInt)
    .option('--page-size <n>', 'mails per page, at most 100', positiveInt)
    .action(async (o: { recipient?: string; page?: number; pageSize?: number }, cmd: Command) => {
      const page = await admin$(cmd, (c) => c.outboxMail({ recipient: o.recipient || undefined, page: o.page, pageSize: o.pageSize }));
      if (globals(cmd).json) print(io, globals(cmd), page);
      else io.out(humanizeMail(page));
    });

  admin.command('card-keys').description('card data keys: ids, purposes, check values (never key material)')
    .action(async (_o: unknown, cmd: Command) => print(io, globals(cmd), await admin$(cmd, (c) => c.cardKeys())));

  admin.command('card-keys-rotate').description('make a new PAN data key active; then run card-keys-reencrypt')
    .action(async (_o: unknown, cmd: Command) => {
      print(io, globals(cmd), await admin$(cmd, (c) => c.rotatePanDataKey()), 'New PAN data key active.');
    });

  admin.command('card-keys-reencrypt').description('re-seal every card under a retired PAN data key with the active one, batch by batch, to the end')
    .option('--batch <n>', 'cards per request (1-1000)', positiveInt, 200)
    .action(async (o: { batch: number }, cmd: Command) => {
      const g = globals(cmd);
      let done = 0;
      let bar: cliProgress.SingleBar | null = null;
      let last: ReencryptProgress | null = null;
      for (;;) {
        last = await admin$(cmd, (c) => c.reencryptCardData(Math.min(o.batch, 1000)));
        const reencrypted = Number(last.reencrypted);
        const remaining = Number(last.remaining);
        done += reencrypted;
        if (!bar && !g.json) {
          bar = new cliProgress.SingleBar({ stream: io.progressStream, format: 're-encrypting {bar} {value}/{total} cards | {eta_formatted} left', hideCursor: true },
            cliProgress.Presets.shades_classic);
          bar.start(done + remaining, 0);
        }
        bar?.setTotal(done + remaining);
        bar?.update(done);
        if (remaining === 0) break;
        if (reencrypted === 0) {
          bar?.stop();
          throw new CliFailure(`re-encryption made no progress with ${remaining} cards left (another operator running it?); run it again`, 1);
        }
      }
      bar?.stop();
      const summary = { reencrypted: done, remaining: 0, activeKeyId: last.activeKeyId };
      print(io, g, summary, `All cards are under the active PAN data key ${String(last.activeKeyId)}; retired keys may be destroyed.`);
    });

  admin.command('network-key-create').description('issue a card network ingress key; prints apiKey and secretKey once')
    .requiredOption('--name <name>', 'whose key (the processor)')
    .option('--ip <ip>', 'allowed source address or CIDR; repeatable', collect)
    .action(async (o: { name: string; ip?: string[] }, cmd: Command) => {
      print(io, globals(cmd), await admin$(cmd, (c) => c.createNetworkKey({ name: o.name, ipAllowlist: o.ip ?? [] })), 'Network key created. The secretKey is shown only now.');
    });

  admin.command('network-key-list').description('card network ingress keys (no secrets)')
    .action(async (_o: unknown, cmd: Command) => print(io, globals(cmd), await admin$(cmd, (c) => c.networkKeys())));

  admin.command('network-key-revoke').description('revoke a card network ingress key')
    .requiredOption('--key-id <id>', 'the key')
    .action(async (o: { keyId: string }, cmd: Command) => {
      print(io, globals(cmd), await admin$(cmd, (c) => c.revokeNetworkKey(o.keyId)), 'Key revoked.');
    });

  admin.command('call').description('any admin route: call GET|POST <route> [--body JSON], e.g. call GET partners')
    .addArgument(admin.createArgument('<method>', 'GET or POST').argParser((v: string) => {
      const method = v.toUpperCase();
      if (method !== 'GET' && method !== 'POST') throw new InvalidArgumentError('must be GET or POST');
      return method;
    }))
    .argument('<route>', 'path under /internal/admin/v1/ ("partners", "partners/detail?partnerId=..."), or the full path')
    .option('--body <json>', 'POST body, a JSON object', jsonObject)
    .action(async (method: 'GET' | 'POST', route: string, o: { body?: Json }, cmd: Command) => {
      if (method === 'GET' && o.body) throw new CliFailure('--body is for POST only', 2);
      const path = adminRoute(route);
      print(io, globals(cmd), await admin$(cmd, (c) => c.call(method, path, method === 'POST' ? { body: o.body ?? {} } : {})));
    });

  operatorCommands(admin, { admin: admin$, print: (cmd, data, heading) => print(io, globals(cmd), data, heading) });
  return admin;
}
