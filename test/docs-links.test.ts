/**
 * The README and docs/*.md stand on their own: every relative link resolves to a file or folder of
 * this repository (and a `#fragment` into a Markdown file to one of its headings), and no link or
 * path points outside it (`../` above the repository root, such as the former `../shared/...`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** Markdown text without fenced code blocks (their brackets are not links). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

/** Targets of inline links and images, `[text](target)` and `[text](<target> "title")`. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const m of prose(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
  for (const m of prose(text).matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) targets.push(m[1]);
  return targets;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

function problems(page: string): string[] {
  const text = readFileSync(join(root, page), "utf8");
  const found: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [path, fragment] = target.split("#", 2);
    const file = path === "" ? join(root, page) : resolve(root, dirname(page), decodeURIComponent(path.split("?")[0]));
    const inRepo = relative(root, file);
    if (inRepo.startsWith(`..${sep}`) || inRepo === "..") {
      found.push(`${target}: leaves the repository`);
      continue;
    }
    if (!existsSync(file)) {
      found.push(`${target}: no such file`);
      continue;
    }
    if (fragment && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(fragment.toLowerCase())) {
      found.push(`${target}: no heading #${fragment}`);
    }
  }
  // A `../` path written as code rather than as a link must be followable too.
  for (const m of text.matchAll(/`(\.\.\/[^`\s]*)`/g)) {
    const file = resolve(root, dirname(page), m[1]);
    const inRepo = relative(root, file);
    if (inRepo.startsWith(`..${sep}`) || inRepo === "..") found.push(`${m[1]}: leaves the repository`);
    else if (!existsSync(file)) found.push(`${m[1]}: no such file`);
  }
  return found;
}

describe("documentation links", () => {
  it("finds the pages", () => {
    expect(pages).toContain("README.md");
    expect(pages).toContain("docs/rest-api.md");
  });

  it.each(pages)("%s: every relative link resolves inside the repository", (page) => {
    expect(problems(page)).toEqual([]);
  });
});
