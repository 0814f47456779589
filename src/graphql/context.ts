/** The GraphQL context: built once per request by the server (src/server.ts). */
import type { Logger } from "../infra/logger.js";
import type { ServiceContext } from "../services/context.js";
import type { Mailer } from "../infra/mail.js";
import type { EventFeeds } from "./event-feed.js";

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
  /**
   * The open live event streams of the app (the `events` subscription, graphql/event-feed.ts); absent where no
   * stream can be served (operations run in process by the REST adapter or the event printer).
   */
  eventFeeds?: EventFeeds;
}
