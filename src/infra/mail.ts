/**
 * Outgoing e-mail (docs/reminders.md): a Mailer sends one message; `createSmtpMailer` sends over
 * SMTP with nodemailer (`SMTP_URL`, e.g. `smtp://user:pass@host:587`, `smtps://...:465`; query
 * options of nodemailer's URL form such as `?ignoreTLS=true` apply). Without SMTP_URL no Mailer
 * exists and the outbox keeps messages (services/outbox.ts).
 */
import nodemailer from "nodemailer";

export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface MailMessage {
  from: string;
  to: string[];
  /** blind copies */
  bcc?: string[];
  replyTo?: string;
  subject: string;
  text: string;
  /** an HTML alternative of `text` */
  html?: string;
  attachments?: MailAttachment[];
}

export interface MailResult {
  /** Message-ID header of the sent message */
  messageId: string;
  accepted: string[];
  /** recipients the server refused while accepting others (all refused is an error) */
  rejected: string[];
  /** the server's last reply */
  response: string;
}

export interface Mailer {
  /** Sends one message; rejects when the server is unreachable or refuses it (every recipient refused included). */
  send(message: MailMessage): Promise<MailResult>;
  close(): void;
}

/**
 * Timeouts keep one attempt well under the outbox's claim lease (domain/reminders.ts
 * CLAIM_LEASE_MS), so a slow server never makes two workers send the same message.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 60_000, dnsTimeout: 10_000 };

function addresses(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((a) => (typeof a === "string" ? a : String((a as { address?: string }).address ?? a)));
}

/** A Mailer over SMTP; one connection per message (reminders are few, and nothing stays open). */
export function createSmtpMailer(smtpUrl: string): Mailer {
  const transport = nodemailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
  return {
    async send(message) {
      const info = await transport.sendMail({
        from: message.from,
        to: message.to,
        bcc: message.bcc,
        replyTo: message.replyTo,
        subject: message.subject,
        text: message.text,
        html: message.html,
        attachments: message.attachments?.map((a) => ({
          filename: a.filename,
          content: a.content,
          contentType: a.contentType,
        })),
      });
      return {
        messageId: info.messageId,
        accepted: addresses(info.accepted),
        rejected: addresses(info.rejected),
        response: String(info.response ?? ""),
      };
    },
    close() {
      transport.close();
    },
  };
}
