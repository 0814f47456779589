/**
 * nginx for the benchmarks (bench/scale.ts): Debian's nginx run as a child of the bench, in a
 * temporary prefix of its own (configuration, pid, logs), with one listening port per named group
 * of upstream servers.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
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
 * The configuration: `worker_processes auto`, and per group an upstream of its servers (round robin, keep-alive
 * connections) and a server on its port proxying everything to it over HTTP/1.1 with the client's address in
 * X-Forwarded-For, as deploy/nginx.conf does.
 */
function configuration(dir: string, groups: Map<string, { port: number; servers: string[] }>): string {
  const blocks = [...groups].map(
    ([name, { port, servers }]) => `
  upstream ${name} {
${servers.map((s) => `    server ${new URL(s).host} max_fails=1 fail_timeout=2s;`).join("\n")}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port} reuseport;
    location / {
      proxy_pass http://${name};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }`,
  );
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
${blocks.join("\n")}
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
