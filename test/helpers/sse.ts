/**
 * A GraphQL subscription over Server-Sent Events as a client sends it (GraphQL over SSE, distinct
 * connections mode, as Yoga speaks it): a POST to /graphql with `Accept: text/event-stream`, read
 * with fetch, its messages parsed as they come.
 */

/** One message of the stream: `event: next` with a GraphQL result, or `event: complete`. */
export interface SseMessage {
  event: string;
  /** the parsed `data` (a GraphQL result for `next`; null for `complete`) */
  data: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** every message so far */
  messages: SseMessage[];
  /** resolves once `count` messages arrived (rejects after `timeoutMs`, or when the stream ended first) */
  waitFor(count: number, timeoutMs?: number): Promise<SseMessage[]>;
  /** resolves when the answer ended (the server closed it, or `close` was called) */
  ended: Promise<void>;
  /** aborts the request */
  close(): void;
}

/** Opens a subscription on `url`/graphql with `headers` (an API key's Authorization, a portal's cookie). */
export async function subscribe(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const messages: SseMessage[] = [];
  const waiters = new Set<() => void>();
  let finished = false;
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = "message";
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) continue;
            const [field, ...rest] = line.split(":");
            const value = rest.join(":").replace(/^ /, "");
            if (field === "event") event = value;
            else if (field === "data") data.push(value);
          }
          if (data.length === 0 && event === "message") continue; // a ping
          const text = data.join("\n");
          messages.push({ event, data: text ? JSON.parse(text) : null });
          for (const w of waiters) w();
        }
      }
    } catch (e) {
      if ((e as Error).name !== "AbortError") throw e;
    } finally {
      finished = true;
      for (const w of waiters) w();
    }
  })();
  ended.catch(() => undefined);
  return {
    status: res.status,
    headers: res.headers,
    messages,
    ended,
    close: () => abort.abort(),
    waitFor(count, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length >= count) {
            done();
            resolve(messages.slice());
          } else if (finished) {
            done();
            reject(new Error(`the stream ended after ${messages.length} of ${count} messages`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${messages.length} of ${count} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
