/**
 * Builds the customer portal (docs/customer-portal.md) from web/portal/ into dist/portal, served by the
 * service under /portal/ (src/pages/portal.ts): one script and one stylesheet file, nothing inline
 * (the page's CSP has no 'unsafe-inline'), no CDN.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: here,
  base: "/portal/",
  logLevel: "warn",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: fileURLToPath(new URL("../../dist/portal", import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
