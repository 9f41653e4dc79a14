import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import type { Db, Queryable } from './db/db.ts';
import { newId } from './crypto/secrets.ts';

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
  private readonly transport: Transporter | null;

  constructor(private readonly config: Config, private readonly db: Db, private readonly log: Logger) {
    this.transport = config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : null;
  }

  /** Records the message in the caller's transaction; call deliver() with the id after commit. */
  async enqueue(q: Queryable, message: MailMessage): Promise<string> {
    const mailId = newId('ml');
    await q.query(
      `INSERT INTO outbox_mail (mail_id, recipient, subject, body, transport) VALUES ($1, $2, $3, $4, $5)`,
      [mailId, message.to, message.subject, this.transport ? '' : message.body, this.transport ? 'SMTP' : 'OUTBOX'],
    );
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
      await this.transport.sendMail({ from: this.config.mailFrom, to: message.to, subject: message.subject, text: message.body });
      await this.db.query('UPDATE outbox_mail SET sent_at = now() WHERE mail_id = $1', [mailId]);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      await this.db.query('UPDATE outbox_mail SET error = $2 WHERE mail_id = $1', [mailId, error]);
      this.log.error({ mailId, error }, 'SMTP delivery failed');
    }
  }
}
