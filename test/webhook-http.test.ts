/**
 * The webhook sender's address guard (src/infra/webhook-http.ts) where private networks are
 * allowed (test mode, WEBHOOK_ALLOW_PRIVATE_NETWORKS): link-local and unspecified addresses are
 * refused whether the URL names them or a host name resolves to them; loopback is delivered to,
 * with no complaint from request-filtering-agent.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { guardedLookup, WebhookHttp, type Lookup } from "../src/infra/webhook-http.js";

/** A resolver that answers every name with `addresses`. */
const resolvingTo =
  (...addresses: string[]): Lookup =>
  (_hostname, options, callback) => {
    const all = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    if (options.all) callback(null, all);
    else callback(null, all[0].address, all[0].family);
  };

function lookUp(lookup: Lookup, all: boolean) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    lookup("hooks.example", { all }, (error, address) => resolve({ error, address })),
  );
}

describe("guardedLookup", () => {
  it("refuses a name that resolves to a link-local or unspecified address, in either form", async () => {
    for (const all of [true, false]) {
      for (const address of ["169.254.169.254", "fe80::1", "0.0.0.0"]) {
        const { error } = await lookUp(guardedLookup(resolvingTo(address)), all);
        expect(error?.code, address).toBe("EADDRNOTALLOWED");
        expect(error?.message).toContain(address);
      }
      // one refused address among several is enough
      expect((await lookUp(guardedLookup(resolvingTo("10.0.0.5", "169.254.1.1")), all)).error?.code).toBe(
        all ? "EADDRNOTALLOWED" : undefined,
      );
    }
  });

  it("passes loopback and private addresses through as they were resolved", async () => {
    expect(await lookUp(guardedLookup(resolvingTo("127.0.0.1", "::1")), true)).toEqual({
      error: null,
      address: [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ],
    });
    expect(await lookUp(guardedLookup(resolvingTo("10.1.2.3")), false)).toEqual({ error: null, address: "10.1.2.3" });
  });
});

describe("WebhookHttp.send with private networks allowed", () => {
  let server: http.Server;
  let port: number;
  const received: string[] = [];
  const sender = new WebhookHttp({ timeoutMs: 2_000, socketsPerHost: 2 });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      received.push(req.url ?? "");
      req.resume();
      req.on("end", () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    sender.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses a link-local or unspecified IP literal without connecting", async () => {
    for (const url of ["http://169.254.169.254/latest/meta-data", "http://[fe80::1]/hooks", "http://0.0.0.0/"]) {
      const result = await sender.send(url, {}, "{}", false);
      expect(result.statusCode, url).toBeNull();
      expect(result.error, url).toMatch(/^address refused: it resolves to .*, a (linkLocal|unspecified) address$/);
    }
  });

  it("delivers to loopback by name and by address, and request-filtering-agent logs nothing", async () => {
    const logged = vi.spyOn(console, "error");
    try {
      for (const host of ["localhost", "127.0.0.1"]) {
        const result = await sender.send(`http://${host}:${port}/hooks/${host}`, {}, "{}", false);
        expect(result, host).toMatchObject({ statusCode: 204, error: null });
      }
      expect(received).toEqual(["/hooks/localhost", "/hooks/127.0.0.1"]);
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });
});
