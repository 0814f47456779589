/**
 * How operations reach the schema's roots over HTTP: subscriptions (the `SubscriptionRoot`,
 * builder.ts) only as Server-Sent Events.
 */
import { GraphQLError } from "graphql";
import type { Plugin } from "graphql-yoga";

/**
 * True when an `Accept` header lets the answer be Server-Sent Events (`text/event-stream`,
 * `text/*`, any type, or no header at all), as Yoga's result processors read it.
 */
export function acceptsEventStream(accept: string | null): boolean {
  if (!accept) return true;
  return accept
    .split(",")
    .map((part) => part.split(";")[0].trim().toLowerCase())
    .some((type) => type === "text/event-stream" || type === "text/*" || type === "*/*");
}

/**
 * Subscriptions stream over Server-Sent Events only (docs/webhooks.md "The live event stream
 * (GraphQL)"). Yoga answers a subscription whose request does not accept `text/event-stream` with
 * an empty 406, after the subscription started; this plugin refuses it before it starts, with a
 * 406 in the GraphQL error shape, code `not_acceptable`.
 */
export function subscriptionsOverSsePlugin(): Plugin {
  return {
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request || acceptsEventStream(request.headers.get("accept"))) return;
      setResultAndStopExecution({
        errors: [
          new GraphQLError(
            "A subscription streams its results as Server-Sent Events: send it with `Accept: text/event-stream`.",
            { extensions: { code: "not_acceptable", http: { status: 406 } } },
          ),
        ],
      });
    },
  };
}
