/**
 * A real SMTP server for tests (smtp-server, docs/reminders.md): listens on a random local port,
 * accepts any sender without TLS or auth, and keeps each message parsed by mailparser. `rejecting`
 * makes it refuse every recipient with a temporary 451, as a server in trouble would; `beforeAnswer`
 * holds the reply to a message's DATA (the message is kept already, as a server that took it and has
 * not said so yet).
 */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>` */
  url: string;
  port: number;
  received: ReceivedMail[];
  /** refuse every recipient (451) while true */
  rejecting: boolean;
  /**
   * awaited after a message is kept (`received`) and before its DATA is answered 250: a test holds the
   * answer until it releases it; default: answered at once
   */
  beforeAnswer: (mail: ReceivedMail) => Promise<void>;
  close(): Promise<void>;
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const state = { rejecting: false, beforeAnswer: async (_mail: ReceivedMail) => {} };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (!state.rejecting) return callback();
      const error = Object.assign(new Error("Mailbox temporarily unavailable"), { responseCode: 451 });
      callback(error);
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
          const mail = { envelope: { from, to: session.envelope.rcptTo.map((r) => r.address) }, parsed };
          received.push(mail);
          return state.beforeAnswer(mail);
        })
        .then(() => callback())
        .catch((e: Error) => callback(e));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    get rejecting() {
      return state.rejecting;
    },
    set rejecting(value: boolean) {
      state.rejecting = value;
    },
    get beforeAnswer() {
      return state.beforeAnswer;
    },
    set beforeAnswer(value: (mail: ReceivedMail) => Promise<void>) {
      state.beforeAnswer = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A local TCP port with nothing listening (a server that is down). */
export async function closedPort(): Promise<number> {
  const net = await import("node:net");
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
