/** The GraphQL context: built once per request by the server (src/server.ts). */
import type { Logger } from "../infra/logger.js";
import type { ServiceContext } from "../services/context.js";
import type { Mailer } from "../infra/mail.js";

export interface GraphQLContext extends ServiceContext {
  requestId: string;
  logger: Logger;
  /** SMTP mailer when SMTP_URL is set; null: outgoing mail is kept in the outbox (services/outbox.ts) */
  mailer: Mailer | null;
}
