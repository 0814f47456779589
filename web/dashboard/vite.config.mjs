/**
 * Builds the dashboard (docs/dashboard.md) from web/dashboard/ into dist/dashboard, served by the service under
 * /dashboard/ (src/pages/dashboard.ts): one script and one stylesheet file, nothing inline (the page's CSP has no
 * 'unsafe-inline'), no CDN. Shares web/shared with the customer portal.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: here,
  base: "/dashboard/",
  logLevel: "warn",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: fileURLToPath(new URL("../../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
