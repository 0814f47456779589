/** The GraphQL context: built once per request by the server (src/server.ts). */
import type { Logger } from "../infra/logger.js";
import type { ServiceContext } from "../services/context.js";

export interface GraphQLContext extends ServiceContext {
  requestId: string;
  logger: Logger;
}
