/**
 * The deployment files agree with each other and with the service (docs/scaling.md): compose.yaml
 * rewrites every upstream address of deploy/nginx.conf to one of its api services, its processes
 * differ by SERVICE_ROLE only, and every variable it sets is one the service reads. The files
 * themselves run in test/integration/scaling-nginx.test.ts and scaling-pgbouncer.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, SERVICE_ROLES } from "../src/infra/config.js";
import { ROOT } from "./helpers/processes.js";

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), "utf8");

describe("compose.yaml and deploy/nginx.conf", () => {
  const compose = read("compose.yaml");
  const nginx = read("deploy/nginx.conf");

  it("nginx's command gives every upstream server of deploy/nginx.conf the address of an api service", () => {
    const upstreams = [...nginx.matchAll(/^\s*server (127\.0\.0\.1:\d+)[ ;]/gm)].map((m) => m[1]);
    expect(upstreams.length).toBeGreaterThanOrEqual(2);
    const rewrites = new Map([...compose.matchAll(/-e 's\/([\d.:]+)\/([\w-]+):3000\/'/g)].map((m) => [m[1], m[2]]));
    expect([...rewrites.keys()].sort()).toEqual([...upstreams].sort());
    for (const service of rewrites.values()) {
      const rest = compose.slice(compose.indexOf(`\n  ${service}:\n`) + 1);
      const block = rest.slice(0, rest.slice(1).search(/\n {2}\S/) + 1);
      expect(block, service).toMatch(/SERVICE_ROLE: api/);
    }
    expect(compose).toContain("- ./deploy/nginx.conf:/deploy/nginx.conf:ro");
  });

  it("sets only variables the service reads, with a valid SERVICE_ROLE", () => {
    const environment = compose.slice(compose.indexOf("x-environment:"), compose.indexOf("\nservices:"));
    const variables = [...environment.matchAll(/^ {2}([A-Z_]+):/gm)].map((m) => m[1]);
    expect(variables.length).toBeGreaterThan(0);
    for (const v of variables) expect(CONFIG_VARIABLES).toContain(v);
    const roles = [...compose.matchAll(/SERVICE_ROLE: (\w+)/g)].map((m) => m[1]);
    expect(roles.sort()).toEqual(["api", "api", "worker"]);
    for (const role of roles) expect(SERVICE_ROLES).toContain(role);
  });
});
