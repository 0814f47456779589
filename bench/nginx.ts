/**
 * nginx for the benchmarks (bench/scale.ts): Debian's nginx run as a child of the bench, in a
 * temporary prefix of its own (configuration, pid, logs), with the repository's deploy/nginx.conf
 * once per named group of upstream servers, each on a port of its own.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { nginxSite } from "../test/helpers/proxies.js";
import { processCpuMs } from "./harness.js";

const NGINX = "/usr/sbin/nginx";

export interface Nginx {
  /** `http://127.0.0.1:<port>` of the group `name` */
  url(name: string): string;
  /** CPU time (ms) nginx's master and worker processes have used so far */
  cpuMs(): number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * The configuration: deploy/nginx.conf (test/helpers/proxies.ts `nginxSite`: its upstream servers and `listen`
 * replaced) once per group, its upstream renamed after the group and its `map` kept in the first only.
 */
function configuration(dir: string, groups: Map<string, { port: number; servers: string[] }>): string {
  const sites = [...groups].map(([name, { port, servers }], i) => {
    const site = nginxSite(
      servers.map((s) => Number(new URL(s).port)),
      port,
    ).replaceAll("billing_api", `billing_api_${name}`);
    return i === 0 ? site : site.replace(/^map [\s\S]*?^}\n/m, "");
  });
  return `worker_processes auto;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${sites.join("\n")}
}
`;
}

/**
 * Starts nginx with one port per entry of `upstreams` (name: the servers' base URLs); resolves once every port
 * answers.
 */
export async function startNginx(upstreams: Record<string, string[]>): Promise<Nginx> {
  if (!fs.existsSync(NGINX)) throw new Error(`${NGINX} not found: install Debian's nginx (apt-get install nginx)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-nginx-"));
  const groups = new Map<string, { port: number; servers: string[] }>();
  for (const [name, servers] of Object.entries(upstreams)) groups.set(name, { port: await freePort(), servers });
  const file = path.join(dir, "nginx.conf");
  fs.writeFileSync(file, configuration(dir, groups));
  const master = spawn(NGINX, ["-p", dir, "-c", file, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "inherit"] });
  const url = (name: string) => `http://127.0.0.1:${groups.get(name)!.port}`;
  const deadline = Date.now() + 10_000;
  for (const name of groups.keys())
    for (;;) {
      if (master.exitCode !== null) throw new Error(`nginx exited with ${master.exitCode}: ${dir}/error.log`);
      const ok = await fetch(`${url(name)}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`nginx did not answer on ${url(name)} within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  const pids = () => {
    const children = spawnSync("pgrep", ["-P", String(master.pid)], { encoding: "utf8" }).stdout.split("\n");
    return [master.pid!, ...children.filter(Boolean).map(Number)];
  };
  return {
    url,
    cpuMs: () => pids().reduce((sum, pid) => sum + processCpuMs(pid), 0),
    stop: async () => {
      if (master.exitCode === null) {
        const exited = new Promise((r) => master.once("exit", r));
        master.kill("SIGQUIT");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
