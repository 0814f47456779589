/** The GraphQL context: built once per request by the server (src/server.ts). */
import type { Logger } from "../infra/logger.js";
import type { ServiceContext } from "../services/context.js";
import type { Mailer } from "../infra/mail.js";

export interface GraphQLContext extends ServiceContext {
  requestId: string;
  logger: Logger;
  /** SMTP mailer when SMTP_URL is set; null: outgoing mail is kept in the outbox (services/outbox.ts) */
  mailer: Mailer | null;
  /**
   * Set-Cookie values the HTTP answer carries (server.ts appends them after the operation ran): the portal's
   * sign-out clears its cookies here. Absent where no HTTP answer is made (REST runs operations that set none).
   */
  responseCookies?: string[];
}
