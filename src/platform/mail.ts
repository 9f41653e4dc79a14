import type { Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import type { Db, Queryable } from './db/db.ts';
import { newId } from './crypto/secrets.ts';
import { insertMail, listMail, markMailFailed, markMailSent, type OutboxMailRow } from './mail-store.ts';

export type { OutboxMailRow };

export interface MailMessage {
  to: string;
  subject: string;
  body: string;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Mail goes through SMTP when SMTP_URL is configured; otherwise the outbox_mail table is the
 * delivery (D14, D51) and operators read it through the admin API. The row is written inside the
 * caller's transaction so a message exists exactly when the change that caused it committed.
 */
export class Mailer {
  /** Whether mail goes out over SMTP; the SMTP client itself is loaded at the first delivery. */
  private readonly transport: boolean;
  private smtp: Promise<Transporter> | null = null;

  constructor(private readonly config: Config, private readonly db: Db, private readonly log: Logger) {
    this.transport = config.smtpUrl !== null;
  }

  private smtpClient(): Promise<Transporter> {
    this.smtp ??= import('nodemailer').then((m) => m.default.createTransport(this.config.smtpUrl!));
    return this.smtp;
  }

  /** Records the message in the caller's transaction; call deliver() with the id after commit. */
  async enqueue(q: Queryable, message: MailMessage): Promise<string> {
    const mailId = newId('ml');
    await insertMail(q, {
      mailId, recipient: message.to, subject: message.subject, body: this.transport ? '' : message.body, transport: this.transport ? 'SMTP' : 'OUTBOX',
    });
    if (this.transport) this.pending.set(mailId, message);
    else this.log.info({ mailId, recipient: message.to, subject: message.subject }, 'mail written to the outbox (no SMTP configured)');
    return mailId;
  }

  // SMTP bodies are held in memory only until sent, so secrets in them never land in the database.
  private readonly pending = new Map<string, MailMessage>();

  async deliver(mailId: string): Promise<void> {
    const message = this.pending.get(mailId);
    if (!this.transport || !message) return;
    this.pending.delete(mailId);
    try {
      await (await this.smtpClient()).sendMail({ from: this.config.mailFrom, to: message.to, subject: message.subject, text: message.body });
      await markMailSent(this.db, mailId);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      await markMailFailed(this.db, mailId, error);
      this.log.error({ mailId, error }, 'SMTP delivery failed');
    }
  }
}

/** Operators (D51): the outbox, newest first; bodies are kept only when no SMTP is configured. */
export function readOutboxMail(q: Queryable, filter: { recipient: string | null; limit: number; offset: number }): Promise<{ total: number; rows: OutboxMailRow[] }> {
  return listMail(q, filter.recipient, filter.limit, filter.offset);
}
